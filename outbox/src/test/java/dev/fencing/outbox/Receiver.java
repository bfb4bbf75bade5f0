package dev.fencing.outbox;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * A real JDK HttpServer receiving the relay's requests: it records each (with the time it arrived) and answers as
 * the test says; the default answer is 200. {@link #applied()} is what a receiver that dedupes by Idempotency-Key
 * applied.
 */
final class Receiver implements AutoCloseable {

  record Request(String method, String path, Map<String, List<String>> headers, String body, long arrivedNanos) {
    String header(String name) {
      for (Map.Entry<String, List<String>> e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) {
          return e.getValue().get(0);
        }
      }
      return null;
    }
  }

  /** An answer: status and extra headers. */
  record Answer(int status, Map<String, String> headers) {
    static final Answer OK = new Answer(200, Map.of());
  }

  private final HttpServer server;
  private final List<Request> requests = new ArrayList<>();
  private final Map<String, Request> applied = new ConcurrentHashMap<>();
  private volatile Function<Request, Answer> answer = r -> Answer.OK;

  Receiver() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::handle);
    server.setExecutor(Executors.newCachedThreadPool());
    server.start();
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
  }

  void answer(Function<Request, Answer> answer) {
    this.answer = answer;
  }

  private void handle(HttpExchange exchange) throws IOException {
    Request r = new Request(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
        Map.copyOf(exchange.getRequestHeaders()),
        new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8), System.nanoTime());
    synchronized (requests) {
      requests.add(r);
    }
    Answer a;
    try {
      a = answer.apply(r);
    } catch (RuntimeException e) {
      a = new Answer(599, Map.of());
    }
    if (a.status() >= 200 && a.status() < 300) {
      String key = r.header("Idempotency-Key");
      applied.putIfAbsent(key == null ? "none" : key, r);
    }
    a.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
    // No body: headers and a body in two writes would meet the client's delayed ACK (Nagle), 40 ms per answer.
    exchange.sendResponseHeaders(a.status(), -1);
    exchange.close();
  }

  List<Request> requests() {
    synchronized (requests) {
      return List.copyOf(requests);
    }
  }

  /** The first accepted request of each Idempotency-Key. */
  Map<String, Request> applied() {
    return Map.copyOf(applied);
  }

  static void await(String what, Duration timeout, BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("not within " + timeout.toMillis() + " ms: " + what);
      }
      Thread.sleep(20);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
