package dev.fencing.it.continuations;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * An application (no fencing code) whose leader-only work continues on library threads: {@link #tick} sends a Kafka
 * record whose callback writes, an HTTP request whose {@code thenApply} stage writes (the JDK HttpClient completes
 * it on its own executor), a {@code thenCombine} stage that writes, run by a thread of the application's own, and a
 * {@code new Thread} it starts and joins that writes. Every write goes to two tables, {@code cont_fenced} and {@code cont_log}, one statement
 * each; a refused one prints {@code WRITE-ERR <kind> <table> <SQLSTATE>}. Arguments: writer name, bootstrap servers,
 * topic, JDBC URL, HTTP URL. {@code tick} runs every 200 ms; the agent makes it a section (outside
 * {@code dev.fencing.agent}, which the agent never instruments).
 */
public final class ContinuationsApp {
  private final String writer;
  private final KafkaProducer<String, String> producer;
  private final String topic;
  private final String jdbcUrl;
  private final HttpClient http = HttpClient.newHttpClient();
  private final URI uri;
  private final ThreadLocal<Connection> connections = new ThreadLocal<>();

  private ContinuationsApp(String[] args) {
    writer = args[0];
    Properties p = new Properties();
    p.put("bootstrap.servers", args[1]);
    // Records wait in the producer's buffer for 5 s, so that some are there whenever the JVM is frozen (between a
    // batch leaving and the next tick's record, about one tick, the buffer is empty).
    p.put("linger.ms", "5000");
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    producer = new KafkaProducer<>(p);
    topic = args[2];
    jdbcUrl = args[3];
    uri = URI.create(args[4]);
  }

  public void tick() {
    producer.send(new ProducerRecord<>(topic, writer, "tick"),
        (metadata, error) -> write("kafka", error == null ? "ok" : "failed"));
    http.sendAsync(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding())
        .thenApply(response -> {
          write("http", "status-" + response.statusCode());
          return response;
        });
    // A two-stage form, run by the thread that completes the later of its two futures: here a thread of the
    // application's own, started outside every scope (the HttpClient's completions run as executor tasks submitted in
    // the section, which carry its scope anyway).
    CompletableFuture<String> first = new CompletableFuture<>();
    CompletableFuture<String> second = new CompletableFuture<>();
    first.thenCombine(second, (a, b) -> {
      write("combined", a + "-" + b);
      return a;
    });
    toComplete.add(first);
    toComplete.add(second);
    // A thread of its own the section starts and waits for (fork and join, no executor).
    Thread own = new Thread(() -> writeOnce("thread", "ok"), "tick-thread");
    own.start();
    try {
      own.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * As {@link #write}, for the threads {@link #tick} starts: on one connection they share (each is joined before the
   * next starts), so that a tick takes no longer than it did without them.
   */
  private void writeOnce(String kind, String outcome) {
    synchronized (threadConnection) {
      Connection c = threadConnection[0];
      if (c != null) {
        connections.set(c);
      }
      try {
        write(kind, outcome);
      } finally {
        threadConnection[0] = connections.get();
        connections.remove();
      }
    }
  }

  /** The connection of the threads {@link #tick} starts. */
  private final Connection[] threadConnection = new Connection[1];

  /** Futures the completer thread completes, 50 ms after they were handed to it. */
  private final BlockingQueue<CompletableFuture<String>> toComplete = new LinkedBlockingQueue<>();

  private void completeLater() {
    try {
      while (true) {
        CompletableFuture<String> f = toComplete.take();
        Thread.sleep(50);
        f.complete("done");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void write(String kind, String outcome) {
    insert(kind, "cont_fenced", "INSERT INTO cont_fenced (writer, kind) VALUES (?, ?)", null);
    insert(kind, "cont_log", "INSERT INTO cont_log (writer, kind, outcome) VALUES (?, ?, ?)", outcome);
  }

  private void insert(String kind, String table, String sql, String outcome) {
    try {
      Connection c = connections.get();
      if (c == null) {
        c = DriverManager.getConnection(jdbcUrl);
        connections.set(c);
      }
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setString(1, writer);
        ps.setString(2, kind);
        if (outcome != null) {
          ps.setString(3, outcome);
        }
        ps.executeUpdate();
      }
    } catch (SQLException e) {
      System.out.println("WRITE-ERR " + kind + " " + table + " " + e.getSQLState());
    }
  }

  public static void main(String[] args) throws Exception {
    ContinuationsApp app = new ContinuationsApp(args);
    Thread completer = new Thread(app::completeLater, "completer");
    completer.setDaemon(true);
    completer.start();
    System.out.println("APP STARTED");
    while (true) {
      app.tick();
      Thread.sleep(200);
    }
  }
}
