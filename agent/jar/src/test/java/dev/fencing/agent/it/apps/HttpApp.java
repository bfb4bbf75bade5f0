package dev.fencing.agent.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * An ordinary JDK HttpClient application (no fencing code) driven over stdin: {@code SEND <method> <url>} (send) or
 * {@code ASYNC <method> <url>} (sendAsync), or {@code URLC <method> <url>} (HttpURLConnection), or {@code CHURN <n> <url>} (n POSTs, then GC), or {@code ONEXIT <delayMs> <method> <url>} (a shutdown hook that
 * makes that request; prints {@code EXIT STATUS <code>} or {@code EXIT ERR ...}). Prints {@code STATUS <code>} or {@code ERR <exception>: <message>}.
 */
public final class HttpApp {
  private HttpApp() {}

  /** URLC <method> <url>: the same through HttpURLConnection. */
  private static void urlConnection(String method, String url) {
    try {
      java.net.HttpURLConnection c = (java.net.HttpURLConnection) URI.create(url).toURL().openConnection();
      c.setRequestMethod(method);
      c.setInstanceFollowRedirects(true);
      if (!method.equals("GET")) {
        c.setDoOutput(true);
        try (java.io.OutputStream out = c.getOutputStream()) {
          out.write('x');
        }
      }
      System.out.println("STATUS " + c.getResponseCode());
    } catch (Exception e) {
      System.out.println("ERR " + e.getClass().getName() + ": " + e.getMessage());
    }
    System.out.flush();
  }

  public static void main(String[] args) throws Exception {
    HttpClient client = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build();
    System.out.println("APP STARTED");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.split(" ");
      if (p[0].equals("CHURN")) {
        // CHURN <n> <url>: n POSTs, each a new request object, sent and dropped. Then collects.
        int ok = 0;
        try {
          for (int i = 0; i < Integer.parseInt(p[1]); i++) {
            HttpRequest r = HttpRequest.newBuilder(URI.create(p[2])).POST(HttpRequest.BodyPublishers.ofString("x")).build();
            ok += client.send(r, HttpResponse.BodyHandlers.discarding()).statusCode() == 200 ? 1 : 0;
          }
          for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
          }
          System.out.println("STATUS churned " + ok);
        } catch (Exception e) {
          System.out.println("ERR " + e.getClass().getName() + ": " + e.getMessage());
        }
        System.out.flush();
        continue;
      }
      if (p[0].equals("ONEXIT")) {
        // ONEXIT <delayMs> <method> <url>: a shutdown hook of the application's own that, delayMs after the
        // JVM was asked to exit, makes one last request (as a framework flushing its last work would).
        long delay = Long.parseLong(p[1]);
        HttpRequest last = HttpRequest.newBuilder(URI.create(p[3]))
            .method(p[2], HttpRequest.BodyPublishers.ofString("last")).build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
          try {
            Thread.sleep(delay);
            System.out.println("EXIT STATUS " + client.send(last, HttpResponse.BodyHandlers.discarding()).statusCode());
          } catch (Exception e) {
            System.out.println("EXIT ERR " + e.getClass().getName() + ": " + e.getMessage());
          }
          System.out.flush();
        }, "app-last-words"));
        System.out.println("STATUS hook");
        System.out.flush();
        continue;
      }
      if (p[0].equals("URLC")) {
        urlConnection(p[1], p[2]);
        continue;
      }
      HttpRequest request = HttpRequest.newBuilder(URI.create(p[2]))
          .method(p[1], p[1].equals("GET") ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString("x"))
          .header("X-App", "1").build();
      try {
        HttpResponse<String> r = p[0].equals("ASYNC")
            ? client.sendAsync(request, HttpResponse.BodyHandlers.ofString()).join()
            : client.send(request, HttpResponse.BodyHandlers.ofString());
        // The caller's request object is never changed by the agent.
        System.out.println("STATUS " + r.statusCode() + " callerHeaders=" + request.headers().map().keySet());
      } catch (Exception e) {
        Throwable t = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        System.out.println("ERR " + t.getClass().getName() + ": " + t.getMessage());
      }
      System.out.flush();
    }
  }
}
