package dev.fencing.demo;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.fencing.protocol.HttpHeaderNames;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Stands for a third party's webhook (a chat channel, a partner's API): it checks no token, and the workers' agents
 * are not told it is fenced. So the only thing between a stale worker and this endpoint is the agent, which blocks
 * side effects toward unfenced destinations once the lease is gone. Records every call it receives.
 *
 * <p>On {@value #OUTBOX_PATH} it also takes the notifications the outbox relay delivers, as a partner's API that
 * dedupes by {@code Idempotency-Key} would: the first delivery of a key is applied (recorded as such), a repeated one
 * is answered 204 and not applied again.
 */
final class WebhookReceiver implements AutoCloseable {
  private static final Pattern FORM = Pattern.compile("worker=([^&]+)&transfer=(\\d+)");

  /** One call: when it arrived, from which worker, for which transfer, and the Fencing-Token header (or null). */
  record Call(long receivedAt, String worker, long transfer, String token) {}

  /** The path the workers' outbox rows name: deliveries from the outbox relay. */
  static final String OUTBOX_PATH = "/hooks/booked";

  /**
   * One delivery on {@value #OUTBOX_PATH}: when, which worker's transfer, its Fencing-Token and Idempotency-Key
   * headers (or null), and whether it was applied (the first delivery of its key).
   */
  record Delivery(long receivedAt, String worker, long transfer, String token, String key, boolean applied) {}

  private final HttpServer server;
  private final List<Call> calls = new CopyOnWriteArrayList<>();
  private final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
  private final java.util.Set<String> appliedKeys = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private WebhookReceiver(HttpServer server) {
    this.server = server;
  }

  static WebhookReceiver start() {
    try {
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      WebhookReceiver receiver = new WebhookReceiver(server);
      server.createContext("/", receiver::handle);
      server.setExecutor(Executors.newFixedThreadPool(2));
      server.start();
      return receiver;
    } catch (IOException e) {
      throw new StoryBroken("cannot start the webhook receiver: " + e.getMessage(), e);
    }
  }

  int port() {
    return server.getAddress().getPort();
  }

  List<Call> calls() {
    return List.copyOf(calls);
  }

  /** The outbox relay's deliveries, in order of arrival. */
  List<Delivery> deliveries() {
    return List.copyOf(deliveries);
  }

  private void handle(HttpExchange ex) throws IOException {
    String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    Matcher m = FORM.matcher(body);
    if (ex.getRequestURI().getPath().equals(OUTBOX_PATH)) {
      String key = ex.getRequestHeaders().getFirst(HttpHeaderNames.IDEMPOTENCY_KEY);
      boolean applied = key != null && appliedKeys.add(key);
      boolean found = m.find();
      deliveries.add(new Delivery(System.currentTimeMillis(), found ? m.group(1) : null,
          found ? Long.parseLong(m.group(2)) : -1, ex.getRequestHeaders().getFirst(HttpHeaderNames.TOKEN), key,
          applied));
    } else if (m.find()) {
      calls.add(new Call(System.currentTimeMillis(), m.group(1), Long.parseLong(m.group(2)),
          ex.getRequestHeaders().getFirst(HttpHeaderNames.TOKEN)));
    }
    ex.sendResponseHeaders(204, -1);
    ex.close();
  }

  @Override
  public void close() {
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }

  @Override
  public String toString() {
    return "webhook receiver on 127.0.0.1:" + port();
  }
}
