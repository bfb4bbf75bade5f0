package dev.fencing.faults;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.fencing.fence.sql.ProcessedEvents;
import dev.fencing.protocol.HttpHeaderNames;
import dev.fencing.protocol.KafkaHeaderNames;
import dev.fencing.protocol.TokenGrammar;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The outbox events' destinations in {@code --work=outbox}: an HTTP receiver ({@code POST /events}) and a consumer of
 * the topic {@value #TOPIC}, neither fenced (no fence filter, no consumer fence, not in the agents' fenced lists):
 * only the outbox stands between a stale holder and them. Each applies an event the way a receiver should, by its
 * event id (the {@code Idempotency-Key} header, the {@code fencing-event-id} record header): in one PostgreSQL
 * transaction {@link ProcessedEvents#markFirst} on {@value #PROCESSED} and, the first time only, the effect, a row in
 * {@value #APPLIED}. Every delivery is recorded in arrival order with the token it carried and whether it was
 * applied; a second delivery of an event (a relay killed before it marked it) is recorded and not applied.
 *
 * <p>{@link #holdNext()} makes the next HTTP delivery wait, after its transaction committed and before the answer,
 * until {@link Hold#release()}: the window in which {@link RelayKill} kills the relay that sent it.
 */
final class OutboxReceiver implements AutoCloseable {
  static final String TOPIC = "outbox-events";
  static final String PROCESSED = "processed_events";
  static final String APPLIED = "outbox_applied";

  /** One delivery as the receiver got it; {@code applied}: the first of its event id, whose effect was made. */
  record Delivery(String channel, String eventId, long token, String lock, boolean applied) {
  }

  /** A held HTTP delivery: {@link #held} completes with its event id once one is held. */
  static final class Hold {
    final CompletableFuture<String> held = new CompletableFuture<>();
    private final CountDownLatch released = new CountDownLatch(1);

    void release() {
      released.countDown();
    }
  }

  private final String pgUrl;
  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private final ThreadLocal<Connection> connections = new ThreadLocal<>();
  private final List<Delivery> deliveries = new ArrayList<>();
  private final AtomicReference<Hold> hold = new AtomicReference<>();
  private final KafkaConsumer<String, String> consumer;
  private final Thread consumerThread;
  private volatile long consumed;
  private volatile boolean closed;

  OutboxReceiver(String pgUrl, String kafkaBootstrap) {
    this.pgUrl = pgUrl;
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen for the outbox's HTTP receiver", e);
    }
    server.setExecutor(executor);
    server.createContext("/events", this::http);
    server.start();
    Properties p = new Properties();
    p.put("bootstrap.servers", kafkaBootstrap);
    p.put("key.deserializer", StringDeserializer.class.getName());
    p.put("value.deserializer", StringDeserializer.class.getName());
    p.put("enable.auto.commit", "false");
    p.put("auto.offset.reset", "earliest");
    consumer = new KafkaConsumer<>(p);
    TopicPartition partition = new TopicPartition(TOPIC, 0);
    consumer.assign(List.of(partition));
    consumer.seekToBeginning(List.of(partition));
    consumerThread = new Thread(this::consume, "outbox-receiver-kafka");
    consumerThread.setDaemon(true);
    consumerThread.start();
  }

  /** The tables the receivers write: the processed event ids ({@code sql install --processed-events}) and the effect. */
  static void createTables(Connection c) throws SQLException {
    new dev.fencing.fence.sql.OutboxInstaller(c).installProcessedEvents(dev.fencing.fence.sql.TableName.parse(
        PROCESSED));
    try (Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + APPLIED + " (id bigserial PRIMARY KEY, event_id text NOT NULL, channel text NOT NULL,"
          + " token bigint, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())");
    }
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/events";
  }

  private void http(HttpExchange exchange) throws IOException {
    try (exchange) {
      exchange.getRequestBody().readAllBytes();
      String eventId = exchange.getRequestHeaders().getFirst(HttpHeaderNames.IDEMPOTENCY_KEY);
      String token = exchange.getRequestHeaders().getFirst(HttpHeaderNames.TOKEN);
      String lock = exchange.getRequestHeaders().getFirst(HttpHeaderNames.LOCK);
      if (eventId == null) {
        exchange.sendResponseHeaders(400, -1);
        return;
      }
      try {
        receive("http", eventId, token, lock);
      } catch (SQLException e) {
        // PostgreSQL restarting: the relay tries again.
        exchange.sendResponseHeaders(503, -1);
        return;
      }
      Hold h = hold.getAndSet(null);
      if (h != null) {
        h.held.complete(eventId);
        try {
          h.released.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      exchange.sendResponseHeaders(200, -1);
    }
  }

  /** The next HTTP delivery is held after it was applied, until {@link Hold#release()}. */
  Hold holdNext() {
    Hold h = new Hold();
    hold.set(h);
    return h;
  }

  /** Withdraws {@code h} if no delivery took it yet; whether it was withdrawn. */
  boolean cancel(Hold h) {
    return hold.compareAndSet(h, null);
  }

  private void consume() {
    while (!closed) {
      try {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          String eventId = header(r, KafkaHeaderNames.EVENT_ID);
          while (!closed) {
            try {
              String fencing = header(r, KafkaHeaderNames.FENCING);
              String[] fields = fencing == null ? new String[3] : TokenGrammar.kafkaFields(fencing);
              receive("kafka", eventId == null ? "" : eventId, fields[0], fields[1]);
              break;
            } catch (SQLException e) {
              FaultRun.sleep(200);
            }
          }
          consumed = r.offset() + 1;
        }
      } catch (WakeupException e) {
        return;
      } catch (RuntimeException e) {
        if (!closed) {
          FaultRun.sleep(200);
        }
      }
    }
  }

  private static String header(ConsumerRecord<String, String> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  /** Marks the event processed and, the first time, applies it, in one transaction; then records the delivery. */
  private void receive(String channel, String eventId, String token, String lock) throws SQLException {
    long tokenValue = parse(token);
    Connection c = connections.get();
    try {
      if (c == null || c.isClosed()) {
        c = DriverManager.getConnection(pgUrl);
        connections.set(c);
      }
      c.setAutoCommit(false);
      boolean first = ProcessedEvents.markFirst(c, PROCESSED, eventId);
      if (first) {
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + APPLIED
            + " (event_id, channel, token) VALUES (?, ?, ?)")) {
          insert.setString(1, eventId);
          insert.setString(2, channel);
          insert.setLong(3, tokenValue);
          insert.executeUpdate();
        }
      }
      c.commit();
      synchronized (deliveries) {
        deliveries.add(new Delivery(channel, eventId, tokenValue, lock == null ? "" : lock, first));
      }
    } catch (SQLException e) {
      if (c != null) {
        try {
          c.close();
        } catch (SQLException ignored) {
          // reopened on the next delivery
        }
      }
      connections.remove();
      throw e;
    }
  }

  private static long parse(String token) {
    try {
      return token == null ? 0 : Long.parseLong(token.strip());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** Every delivery so far, in arrival order (per receiver). */
  List<Delivery> deliveries() {
    synchronized (deliveries) {
      return List.copyOf(deliveries);
    }
  }

  /** How many times each event id was applied (rows of {@value #APPLIED}). */
  Map<String, Integer> applied() {
    Map<String, Integer> counts = new TreeMap<>();
    try (Connection c = DriverManager.getConnection(pgUrl); Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT event_id, count(*) FROM " + APPLIED + " GROUP BY event_id")) {
      while (r.next()) {
        counts.put(r.getString(1), r.getInt(2));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read " + APPLIED + ": " + e.getMessage(), e);
    }
    return counts;
  }

  /** Whether the consumer has applied every record below {@code endOffset}, waited for up to {@code timeout}. */
  boolean awaitConsumed(long endOffset, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (consumed < endOffset) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      FaultRun.sleep(100);
    }
    return true;
  }

  @Override
  public void close() {
    closed = true;
    Hold h = hold.getAndSet(null);
    if (h != null) {
      h.release();
    }
    consumer.wakeup();
    try {
      consumerThread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    consumer.close(Duration.ofSeconds(1));
    server.stop(0);
    executor.shutdownNow();
  }
}
