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
 * makes that request; prints {@code EXIT STATUS <code>} or {@code EXIT ERR ...}), or {@code BG <tag> <command>} (a
 * SEND, ASYNC or URLC command on a thread of its own, for a request a server holds: answers {@code STATUS started} at
 * once and prints {@code LATE <tag> <answer>} when it is done). Prints {@code STATUS <code>} or {@code ERR <exception>: <message>}.
 */
public final class HttpApp {
  private HttpApp() {}

  /** URLC <method> <url>: the same through HttpURLConnection. */
  private static String urlConnection(String method, String url) {
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
      return "STATUS " + c.getResponseCode();
    } catch (Exception e) {
      return "ERR " + e.getClass().getName() + ": " + e.getMessage();
    }
  }

  /** The answer to a SEND, ASYNC or URLC command. */
  private static String request(String[] p, HttpClient client) {
    if (p[0].equals("URLC")) {
      return urlConnection(p[1], p[2]);
    }
    HttpRequest.BodyPublisher body = p[1].equals("GET")
        ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString("x");
    HttpRequest request = HttpRequest.newBuilder(URI.create(p[2])).method(p[1], body).header("X-App", "1").build();
    try {
      HttpResponse<String> r = p[0].equals("ASYNC")
          ? client.sendAsync(request, HttpResponse.BodyHandlers.ofString()).join()
          : client.send(request, HttpResponse.BodyHandlers.ofString());
      // The caller's request object is never changed by the agent.
      return "STATUS " + r.statusCode() + " callerHeaders=" + request.headers().map().keySet();
    } catch (Exception e) {
      Throwable t = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
      return "ERR " + t.getClass().getName() + ": " + t.getMessage();
    }
  }

  private static void print(String line) {
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
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
      if (p[0].equals("BG")) {
        String tag = p[1];
        String[] command = java.util.Arrays.copyOfRange(p, 2, p.length);
        new Thread(() -> print("LATE " + tag + " " + request(command, client)), "app-bg-" + tag).start();
        print("STATUS started");
        continue;
      }
      print(request(p, client));
    }
  }
}
