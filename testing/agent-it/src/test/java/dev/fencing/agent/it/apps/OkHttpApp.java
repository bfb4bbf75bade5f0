package dev.fencing.agent.it.apps;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * An ordinary OkHttp application (no fencing code) driven over stdin: {@code SYNC <method> <url>} (execute) or
 * {@code ASYNC <method> <url>} (enqueue). Its client has an application interceptor adding {@code X-Interceptor} and
 * a network interceptor adding {@code X-Network}, so requests pass through both kinds of chain. Prints
 * {@code STATUS <code> callerHeaders=[...]} (the caller's request after the call) or {@code ERR <exception>: <message>}.
 * Compiled against OkHttp 4.12 and run against 4.0 to 5.x: only API they all share.
 */
public final class OkHttpApp {
  private OkHttpApp() {}

  public static void main(String[] args) throws Exception {
    OkHttpClient client = new OkHttpClient.Builder()
        .addInterceptor(chain -> chain.proceed(chain.request().newBuilder().header("X-Interceptor", "1").build()))
        .addNetworkInterceptor(chain -> chain.proceed(chain.request().newBuilder().header("X-Network", "1").build()))
        .build();
    MediaType text = MediaType.parse("text/plain");
    // null on the class path; okhttp3 when OkHttp 5 is resolved from the module path
    System.out.println("OkHttp module: " + OkHttpClient.class.getModule().getName());
    System.out.println("APP STARTED");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.split(" ");
      Request request = new Request.Builder().url(p[2])
          .method(p[1], p[1].equals("GET") ? null : RequestBody.create("x", text))
          .header("X-App", "1").build();
      try {
        int status = p[0].equals("ASYNC") ? enqueue(client.newCall(request)) : execute(client.newCall(request));
        // The caller's request object is never changed by the agent.
        System.out.println("STATUS " + status + " callerHeaders=" + request.headers().names());
      } catch (Exception e) {
        System.out.println("ERR " + e.getClass().getName() + ": " + e.getMessage());
      }
      System.out.flush();
    }
  }

  private static int execute(Call call) throws IOException {
    try (Response response = call.execute()) {
      return response.code();
    }
  }

  /** enqueue: the outcome as the callback saw it. */
  private static int enqueue(Call call) throws Exception {
    CompletableFuture<Integer> outcome = new CompletableFuture<>();
    call.enqueue(new Callback() {
      @Override
      public void onFailure(Call c, IOException e) {
        outcome.completeExceptionally(e);
      }

      @Override
      public void onResponse(Call c, Response response) {
        try (Response r = response) {
          outcome.complete(r.code());
        }
      }
    });
    try {
      return outcome.get(20, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw (Exception) e.getCause();
    }
  }
}
