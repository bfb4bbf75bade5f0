package dev.fencing.bench;

import com.sun.net.httpserver.HttpServer;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;

/**
 * The app the HTTP loop benchmark launches: a loopback JDK HttpServer and a JDK HttpClient posting to it from one
 * thread. Prints "requests/s p50-µs p99-µs" of the measured period.
 *
 * <p>Usage: HttpLoop &lt;warm-up seconds&gt; &lt;measure seconds&gt;
 */
public final class HttpLoop {
  private HttpLoop() {}

  public static void main(String[] args) throws Exception {
    long warmup = Long.parseLong(args[0]) * 1_000_000_000L;
    long measure = Long.parseLong(args[1]) * 1_000_000_000L;
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.createContext("/orders", ex -> {
      try (InputStream in = ex.getRequestBody()) {
        in.readAllBytes();
      }
      ex.sendResponseHeaders(204, -1);
      ex.close();
    });
    server.start();
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpRequest request = HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/orders"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"id\":7,\"amount\":10}")).build();
    long end = System.nanoTime() + warmup;
    while (System.nanoTime() < end) {
      send(client, request);
    }
    long[] latencies = new long[1 << 20];
    int n = 0;
    long start = System.nanoTime();
    end = start + measure;
    long now = start;
    while (now < end && n < latencies.length) {
      send(client, request);
      long after = System.nanoTime();
      latencies[n++] = after - now;
      now = after;
    }
    double seconds = (now - start) / 1e9;
    long[] l = Arrays.copyOf(latencies, n);
    Arrays.sort(l);
    System.out.println("result " + (long) (n / seconds) + " " + l[n / 2] / 1000 + " " + l[(int) (n * 0.99)] / 1000);
    server.stop(0);
  }

  private static void send(HttpClient client, HttpRequest request) throws Exception {
    HttpResponse<Void> r = client.send(request, HttpResponse.BodyHandlers.discarding());
    if (r.statusCode() != 204) {
      throw new IllegalStateException("status " + r.statusCode());
    }
  }
}
