package dev.fencing.agent.it.http;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/**
 * A real server recording what it received: "METHOD path token=[...] lock=[...]", then " Name=[...]" for each header
 * named at construction. /redirect answers 307 to /ok, /see-other 303 to /ok, /stale and /replayed a fence's 409,
 * /flaky/... 503 with Retry-After and /timed-out/... 408 the first time each path is asked for (clients retry them);
 * /held-stale a fence's 409 once {@link #releaseHeld} holds (polled, at most 10 s), so that the client is still waiting
 * for it while it sends something else.
 */
public final class RecordingServer implements AutoCloseable {
  public final HttpServer server;
  public final List<String> received = new CopyOnWriteArrayList<>();
  /** The Fencing-Grant values of each request received, as the server lists them ("null" when absent). */
  public final List<String> grants = new CopyOnWriteArrayList<>();
  private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();
  /** When /held-stale may answer. */
  public volatile BooleanSupplier releaseHeld = () -> true;

  public RecordingServer(String... alsoRecorded) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", ex -> {
      var headers = ex.getRequestHeaders();
      StringBuilder line = new StringBuilder(ex.getRequestMethod() + " " + ex.getRequestURI().getPath() + " token="
          + headers.get("Fencing-Token") + " lock=" + headers.get("Fencing-Lock"));
      for (String name : alsoRecorded) {
        line.append(' ').append(name).append('=').append(headers.get(name));
      }
      received.add(line.toString());
      grants.add(String.valueOf(headers.get("Fencing-Grant")));
      ex.getRequestBody().readAllBytes();
      String path = ex.getRequestURI().getPath();
      if (path.equals("/redirect") || path.equals("/see-other")) {
        ex.getResponseHeaders().set("Location", "/ok");
        ex.sendResponseHeaders(path.equals("/redirect") ? 307 : 303, -1);
      } else if (path.startsWith("/flaky/") && failedOnce.add(path)) {
        ex.getResponseHeaders().set("Retry-After", "1");
        ex.sendResponseHeaders(503, -1);
      } else if (path.startsWith("/timed-out/") && failedOnce.add(path)) {
        ex.sendResponseHeaders(408, -1);
      } else if (path.equals("/stale") || path.equals("/replayed") || path.equals("/held-stale")) {
        long giveUp = System.nanoTime() + 10_000_000_000L;
        while (path.equals("/held-stale") && !releaseHeld.getAsBoolean() && System.nanoTime() < giveUp) {
          try {
            Thread.sleep(5);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            break;
          }
        }
        ex.getResponseHeaders().set("Fencing-Rejected", path.equals("/replayed") ? "replayed-token" : "stale-token");
        byte[] body = "{\"status\":409}".getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(409, body.length);
        try (OutputStream out = ex.getResponseBody()) {
          out.write(body);
        }
      } else {
        ex.sendResponseHeaders(200, -1);
      }
      ex.close();
    });
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  public String base() {
    return "http://127.0.0.1:" + port();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
