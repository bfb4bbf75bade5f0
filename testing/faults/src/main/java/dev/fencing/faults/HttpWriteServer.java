package dev.fencing.faults;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.faults.History.Accepted;
import dev.fencing.fence.http.FenceHttpFilter;
import dev.fencing.fence.http.HttpFence;
import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.InMemoryFenceStore;
import dev.fencing.protocol.HttpHeaderNames;
import dev.fencing.protocol.Rejection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The fenced HTTP resource: a JDK HttpServer with the HTTP fence (in-memory store) in front of {@code POST /writes}.
 * The handler records each write it accepts with the token of its request, in the order handlers record (the
 * fence lets a new token's handlers start only after the old token's have returned), then answers 200. It takes a
 * few milliseconds, so that a frozen worker often has a request in flight.
 *
 * <p>Beside it, on a port of its own that the workers reach straight (not through their data-path proxies, which the
 * {@code delay} and {@code data-partition} faults hold) and that their agents do not list as fenced, the unfenced
 * receiver {@code POST /unfenced}: no fence, it records each write in arrival order with the token its request
 * carried (0 if none) and answers 200.
 */
final class HttpWriteServer implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private final HttpFence fence;
  private final List<Accepted> accepted = new ArrayList<>();
  private final List<String> locks;
  private final HttpServer unfenced;
  private final List<Accepted> arrived = new ArrayList<>();

  HttpWriteServer(int port, List<String> locks) {
    this.locks = List.copyOf(locks);
    fence = new HttpFence(FencePolicy.forLocks(locks.toArray(String[]::new)).build(), new InMemoryFenceStore());
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + port, e);
    }
    server.setExecutor(executor);
    server.createContext("/writes", exchange -> {
      try (exchange) {
        String id = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8).strip();
        String token = exchange.getRequestHeaders().getFirst(HttpHeaderNames.TOKEN);
        String lock = exchange.getRequestHeaders().getFirst(HttpHeaderNames.LOCK);
        sleep(5);
        synchronized (accepted) {
          accepted.add(new Accepted("http", accepted.size() + 1, id, Long.parseLong(token),
              System.currentTimeMillis(), lock, -1));
        }
        exchange.sendResponseHeaders(200, -1);
      }
    }).getFilters().add(new FenceHttpFilter(fence));
    server.start();
    try {
      unfenced = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    } catch (IOException e) {
      server.stop(0);
      throw new UncheckedIOException("cannot listen for the unfenced receiver", e);
    }
    unfenced.setExecutor(executor);
    unfenced.createContext("/unfenced", exchange -> {
      try (exchange) {
        String id = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8).strip();
        String token = exchange.getRequestHeaders().getFirst(HttpHeaderNames.TOKEN);
        String lock = exchange.getRequestHeaders().getFirst(HttpHeaderNames.LOCK);
        synchronized (arrived) {
          arrived.add(new Accepted("http-unfenced", arrived.size() + 1, id, parseToken(token),
              System.currentTimeMillis(), lock == null ? "" : lock, -1));
        }
        exchange.sendResponseHeaders(200, -1);
      }
    });
    unfenced.start();
  }

  private static long parseToken(String token) {
    try {
      return token == null ? 0 : Long.parseLong(token.strip());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** The unfenced receiver's URL. */
  String unfencedUrl() {
    return "http://127.0.0.1:" + unfenced.getAddress().getPort() + "/unfenced";
  }

  /** The writes the unfenced receiver got, in arrival order. */
  List<Accepted> unfencedArrivals() {
    synchronized (arrived) {
      return List.copyOf(arrived);
    }
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/writes";
  }

  String hostPort() {
    return "127.0.0.1:" + server.getAddress().getPort();
  }

  List<Accepted> accepted() {
    synchronized (accepted) {
      return List.copyOf(accepted);
    }
  }

  /** The fence's own {@code fencing_fence_rejections_total}, all locks and reasons. */
  long fenceRejections() {
    long sum = 0;
    for (String lock : locks) {
      for (Rejection r : Rejection.values()) {
        sum += fence.metrics().count(lock, r);
      }
    }
    return sum;
  }

  @Override
  public void close() {
    server.stop(0);
    unfenced.stop(0);
    executor.shutdownNow();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
