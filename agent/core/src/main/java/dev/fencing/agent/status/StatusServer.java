package dev.fencing.agent.status;

import dev.fencing.agent.threads.AgentThreads;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * The agent's HTTP endpoint, on the JDK's own HTTP server: GET /status (JSON), GET /metrics (Prometheus text), and the
 * probes GET /ready (200 or 503, see {@link Readiness}) and GET /live (200 while the endpoint answers).
 */
public final class StatusServer implements AutoCloseable {
  private static final String TEXT = "text/plain; charset=utf-8";
  private final HttpServer server;
  private final ExecutorService executor;

  /** Must be called on an agent (daemon) thread: the server's dispatcher thread inherits daemon status from it. */
  public StatusServer(String host, int port, Supplier<String> status, Supplier<String> metrics,
      Supplier<Readiness.Answer> ready) throws IOException {
    server = HttpServer.create(new InetSocketAddress(host, port), 16);
    executor = Executors.newSingleThreadExecutor(AgentThreads.factory("fencing-agent-http"));
    server.setExecutor(executor);
    server.createContext("/status", ex -> respond(ex, "application/json", status));
    server.createContext("/metrics", ex -> respond(ex, "text/plain; version=0.0.4; charset=utf-8", metrics));
    server.createContext("/ready", ex -> {
      // Read once: the status code and the line that explains it come from the same look at the locks.
      Readiness.Answer[] answer = new Readiness.Answer[1];
      respond(ex, TEXT, () -> {
        answer[0] = ready.get();
        return answer[0].line() + "\n";
      }, () -> answer[0].status());
    });
    // The agent never asks for a restart: whatever state it is in, a new JVM would start in the same one.
    server.createContext("/live", ex -> respond(ex, TEXT, () -> "live\n"));
    server.createContext("/", ex -> {
      ex.sendResponseHeaders(404, -1);
      ex.close();
    });
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private static void respond(HttpExchange ex, String type, Supplier<String> body) throws IOException {
    respond(ex, type, body, () -> 200);
  }

  /** {@code status} is read after {@code body}. */
  private static void respond(HttpExchange ex, String type, Supplier<String> body, IntSupplier status)
      throws IOException {
    try {
      if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
        ex.getResponseHeaders().set("Allow", "GET, HEAD");
        ex.sendResponseHeaders(405, -1);
        return;
      }
      byte[] bytes = body.get().getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", type);
      ex.getResponseHeaders().set("Cache-Control", "no-store");
      ex.sendResponseHeaders(status.getAsInt(), "HEAD".equals(ex.getRequestMethod()) ? -1 : bytes.length);
      if (!"HEAD".equals(ex.getRequestMethod())) {
        try (OutputStream out = ex.getResponseBody()) {
          out.write(bytes);
        }
      }
    } catch (RuntimeException e) {
      byte[] msg = ("internal error: " + e).getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(500, msg.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(msg);
      }
    } finally {
      ex.close();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
