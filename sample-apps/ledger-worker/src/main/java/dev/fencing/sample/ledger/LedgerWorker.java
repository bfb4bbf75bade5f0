package dev.fencing.sample.ledger;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * An ordinary worker with no fencing code and no dependency on the project: every ~200 ms it makes one transfer
 * and its four side effects, each attempted on its own (a failed step is reported and the loop goes on, as a batch
 * job that retries later would):
 * <ol>
 *   <li>{@code jdbc}: moves money between two accounts and appends a ledger row, in one PostgreSQL transaction
 *       through a HikariCP pool;</li>
 *   <li>{@code http-inventory}: POSTs a reservation to the inventory service (JDK HttpClient);</li>
 *   <li>{@code kafka}: publishes one event to the transfers topic (plain KafkaProducer);</li>
 *   <li>{@code webhook}: POSTs a notification to an external webhook.</li>
 * </ol>
 * With {@code outbox=<table>} and {@code notify=<url>}, the transfer's transaction also inserts one row into that
 * table, with plain SQL: a notification to {@code notify} that someone else's process delivers after the commit (a
 * transactional outbox). It commits or rolls back with the transfer, and is reported as channel {@code outbox}
 * ({@code OK written}, or {@code ERR not written} when the transaction rolled back).
 * One line per outcome on stdout, for whoever watches: {@code SIDE <epoch ms> <transfer> <channel> <outcome>
 * [detail]}, outcome {@code OK}, an HTTP status, or {@code ERR} with the exception (and SQLSTATE).
 *
 * <p>Arguments, {@code key=value}: name, jdbc, inventory, kafka, topic, webhook, outbox,
 * notify, accounts (default 10),
 * interval-ms (default 200). A {@code stop} line on stdin drains it: the loop ends after the current transfer and
 * the process prints {@code WORKER IDLE} and waits to be shut down.
 */
public final class LedgerWorker {
  private final String name;
  private final int accounts;
  private final HikariDataSource pool;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final KafkaProducer<String, String> producer;
  private final String topic;
  private final URI inventory;
  private final URI webhook;
  private final String outbox;
  private final String notify;

  private LedgerWorker(Settings s) {
    this.name = s.get("name");
    this.accounts = Integer.parseInt(s.get("accounts", "10"));
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(s.get("jdbc"));
    config.setMaximumPoolSize(2);
    config.setPoolName(name);
    this.pool = new HikariDataSource(config);
    Properties p = new Properties();
    p.put("bootstrap.servers", s.get("kafka"));
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    p.put("acks", "all");
    p.put("linger.ms", "0");
    p.put("max.block.ms", "5000");
    p.put("request.timeout.ms", "5000");
    p.put("delivery.timeout.ms", "10000");
    this.producer = new KafkaProducer<>(p);
    this.topic = s.get("topic");
    this.inventory = URI.create(s.get("inventory"));
    this.webhook = URI.create(s.get("webhook"));
    this.outbox = s.get("outbox", null);
    this.notify = outbox == null ? null : s.get("notify");
  }

  public static void main(String[] args) throws Exception {
    Settings settings = Settings.parse(args);
    LedgerWorker worker = new LedgerWorker(settings);
    Runtime.getRuntime().addShutdownHook(new Thread(worker::close, "ledger-worker-shutdown"));
    AtomicBoolean running = new AtomicBoolean(true);
    Thread stdin = new Thread(() -> awaitStop(running), "ledger-worker-stdin");
    stdin.setDaemon(true);
    stdin.start();
    long interval = Long.parseLong(settings.get("interval-ms", "200"));
    System.out.println("WORKER STARTED " + worker.name);
    for (long transfer = 1; running.get(); transfer++) {
      worker.transfer(transfer);
      Thread.sleep(interval);
    }
    System.out.println("WORKER IDLE " + worker.name);
    System.out.flush();
    Thread.currentThread().join(); // drained: waits to be shut down
  }

  /** A {@code stop} line on stdin ends the loop after the current transfer (a drain before shutdown). */
  private static void awaitStop(AtomicBoolean running) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        if (line.strip().equals("stop")) {
          running.set(false);
          return;
        }
      }
    } catch (IOException e) {
      // No stdin: run until shut down.
    }
  }

  private void transfer(long n) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    int from = 1 + random.nextInt(accounts);
    int to = 1 + (from + random.nextInt(accounts - 1)) % accounts;
    int amount = 1 + random.nextInt(50);
    String body = "worker=" + name + "&transfer=" + n + "&amount=" + amount;
    String booked = book(n, from, to, amount, body);
    report(n, "jdbc", booked);
    if (outbox != null) {
      report(n, "outbox", booked.equals("OK") ? "OK written" : "ERR not written: the transaction rolled back");
    }
    report(n, "http-inventory", post(inventory, body));
    report(n, "kafka", publish(n, from, to, amount));
    report(n, "webhook", post(webhook, body));
  }

  /** Debits one account, credits another, appends the ledger row and (with an outbox) the notification, atomically. */
  private String book(long n, int from, int to, int amount, String notification) {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement debit = c.prepareStatement("UPDATE account SET balance = balance - ? WHERE id = ?");
          PreparedStatement credit = c.prepareStatement("UPDATE account SET balance = balance + ? WHERE id = ?");
          PreparedStatement entry = c.prepareStatement(
              "INSERT INTO ledger_entry (worker, transfer, from_account, to_account, amount) VALUES (?, ?, ?, ?, ?)")) {
        debit.setInt(1, amount);
        debit.setInt(2, from);
        debit.executeUpdate();
        credit.setInt(1, amount);
        credit.setInt(2, to);
        credit.executeUpdate();
        entry.setString(1, name);
        entry.setLong(2, n);
        entry.setInt(3, from);
        entry.setInt(4, to);
        entry.setInt(5, amount);
        entry.executeUpdate();
        if (outbox != null) {
          try (PreparedStatement event = c.prepareStatement("INSERT INTO " + outbox + " (channel, target, headers,"
              + " payload) VALUES ('http', ?, 'Content-Type: application/x-www-form-urlencoded', ?)")) {
            event.setString(1, notify);
            event.setString(2, notification);
            event.executeUpdate();
          }
        }
        c.commit();
        return "OK";
      } catch (SQLException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      return "ERR SQLSTATE=" + e.getSQLState() + " " + e.getClass().getName() + ": " + firstLine(e.getMessage());
    }
  }

  private String post(URI uri, String body) {
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      return response.statusCode() + " " + firstLine(response.body());
    } catch (IOException e) {
      return "ERR " + e.getClass().getName() + ": " + firstLine(e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "ERR interrupted";
    }
  }

  private String publish(long n, int from, int to, int amount) {
    String event = "{\"worker\":\"" + name + "\",\"transfer\":" + n + ",\"from\":" + from + ",\"to\":" + to
        + ",\"amount\":" + amount + "}";
    try {
      RecordMetadata m = producer.send(new ProducerRecord<>(topic, name, event)).get(10, TimeUnit.SECONDS);
      return "OK offset=" + m.offset();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      return "ERR " + cause.getClass().getName() + ": " + firstLine(cause.getMessage());
    } catch (java.util.concurrent.TimeoutException e) {
      return "ERR timed out";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "ERR interrupted";
    } catch (RuntimeException e) {
      return "ERR " + e.getClass().getName() + ": " + firstLine(e.getMessage());
    }
  }

  private static void report(long n, String channel, String outcome) {
    System.out.println("SIDE " + System.currentTimeMillis() + " " + n + " " + channel + " " + outcome);
    System.out.flush();
  }

  private void close() {
    producer.close(Duration.ofSeconds(1));
    pool.close();
  }

  private static String firstLine(String text) {
    if (text == null) {
      return "";
    }
    String line = text.strip();
    int nl = line.indexOf('\n');
    return nl < 0 ? line : line.substring(0, nl);
  }
}
