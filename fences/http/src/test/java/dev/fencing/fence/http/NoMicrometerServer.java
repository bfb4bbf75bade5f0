package dev.fencing.fence.http;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.InMemoryFenceStore;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;

/**
 * Run by {@link WithoutMicrometerTest} in a class loader without Micrometer: a JDK HttpServer with the fence, a
 * current and a stale request. Returns both statuses, then the Prometheus text line of the stale count.
 */
public final class NoMicrometerServer {

  private NoMicrometerServer() {
  }

  public static List<String> run() throws Exception {
    HttpFence fence = new HttpFence(FencePolicy.forLocks("ledger").build(), new InMemoryFenceStore());
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/api", ex -> {
      ex.sendResponseHeaders(204, -1);
      ex.close();
    }).getFilters().add(new FenceHttpFilter(fence));
    server.start();
    List<String> out = new ArrayList<>();
    try {
      HttpClient client = HttpClient.newHttpClient();
      for (String token : List.of("7", "5")) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort()
            + "/api/x")).header("Fencing-Token", token).header("Fencing-Lock", "ledger")
            .POST(HttpRequest.BodyPublishers.noBody()).build();
        out.add(String.valueOf(client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode()));
      }
    } finally {
      server.stop(0);
    }
    fence.metrics().prometheusText().lines().filter(l -> l.contains("reason=\"stale_token\"")).forEach(out::add);
    return out;
  }
}
