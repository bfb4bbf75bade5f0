package dev.fencing.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The worker the fault harness runs under the agent: an ordinary loop with no fencing code. Each iteration makes one
 * uniquely identified write ({@code <name>:<seq>}) through every channel, each attempted on its own:
 * <ol>
 *   <li>{@code pg}: one PostgreSQL transaction: UPDATE of a shared counter, a short sleep (so that a freeze often
 *       lands while the transaction is open), INSERT of the write's row;</li>
 *   <li>{@code mariadb}: an autocommit INSERT into MariaDB;</li>
 *   <li>{@code http}: a POST to the harness's fenced HTTP server (JDK HttpClient);</li>
 *   <li>{@code kafka}: a record on the harness's topic, keyed by the write id (acks=all);</li>
 *   <li>the unfenced destinations, reached straight (not through the worker's data-path proxies): {@code pg-unfenced}
 *       (an autocommit INSERT into a table without a fence, on a connection of its own), {@code http-unfenced} (a
 *       POST to the unfenced receiver), {@code kafka-unfenced} (a record on the unfenced topic, from a producer of its
 *       own).</li>
 * </ol>
 * Before each attempt it prints {@code ATTEMPT <epoch ms> <write id> <channel> <state> <token>} with what its agent's
 * {@code /status} said at the start of the iteration (a GET: never blocked, and the token the write carries is the
 * one the resource records), after it {@code OUTCOME <epoch ms> <write id> <channel> <result>}, the raw facts only:
 * {@code OK}, {@code SQLSTATE <code> <message>}, {@code HTTP <status>} or {@code EXC <exception classes> <message>}.
 * The harness classifies them ({@link WorkerLog}). A {@code stop} line on stdin ends the loop after the current
 * iteration; the worker prints {@code IDLE} and waits to be shut down.
 *
 * <p>With several locks ({@code locks=faults-1,faults-2}: the agent declares one section of {@link FaultSections} per
 * lock) each iteration makes one write per lock, {@code <name>:<seq>/<lock>}, each inside its lock's section and
 * into that lock's tables ({@code pg_total_<i>}, {@code pg_write_<i>}, {@code maria_write_<i>}); its ATTEMPT line
 * ends with the lock, and the state and token are that lock's entry of {@code /status}.
 *
 * <p>Arguments, {@code key=value}: name, pg, mariadb, http, kafka, topic, status, pg-direct, http-unfenced,
 * kafka-direct, unfenced-topic, interval-ms (default 100), locks (none: the one JVM-wide lock).
 */
public final class FaultWorker {
  private static final Pattern STATE = Pattern.compile("\"state\":\"([A-Z_]+)\"");
  private static final Pattern TOKEN = Pattern.compile("\"token\":(\\d+)");
  /**
   * The wall clock when the worker started (libfaketime's offset is 0 then) and the monotonic clock at that moment:
   * the times the worker prints are the real time even while the clock-jump fault skews its wall clock, so that the
   * checker's real-time rule compares every process on one clock.
   */
  private static final long EPOCH_MS = System.currentTimeMillis();
  private static final long EPOCH_NANOS = System.nanoTime();

  private final String name;
  private final String pgUrl;
  private final String mariaUrl;
  private final URI httpUri;
  private final URI statusUri;
  private final String topic;
  private final KafkaProducer<String, String> producer;
  /** The section locks, empty with the one JVM-wide lock. */
  private final java.util.List<String> locks;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final String pgDirectUrl;
  private final URI unfencedHttpUri;
  private final String unfencedTopic;
  private final KafkaProducer<String, String> unfencedProducer;
  private Connection pg;
  private Connection maria;
  private Connection pgUnfenced;

  private FaultWorker(Map<String, String> args) {
    this.name = required(args, "name");
    this.pgUrl = required(args, "pg");
    this.mariaUrl = required(args, "mariadb");
    this.httpUri = URI.create(required(args, "http"));
    this.statusUri = URI.create(required(args, "status"));
    this.topic = required(args, "topic");
    String locks = args.getOrDefault("locks", "");
    this.locks = locks.isEmpty() ? java.util.List.of() : java.util.List.of(locks.split(","));
    this.producer = producer(required(args, "kafka"));
    this.pgDirectUrl = required(args, "pg-direct");
    this.unfencedHttpUri = URI.create(required(args, "http-unfenced"));
    this.unfencedTopic = required(args, "unfenced-topic");
    this.unfencedProducer = producer(required(args, "kafka-direct"));
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    p.put("acks", "all");
    p.put("linger.ms", "0");
    p.put("max.block.ms", "5000");
    p.put("request.timeout.ms", "5000");
    p.put("delivery.timeout.ms", "10000");
    return new KafkaProducer<>(p);
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = new HashMap<>();
    for (String arg : argv) {
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("expected key=value, got '" + arg + "'");
      }
      args.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    FaultWorker worker = new FaultWorker(args);
    long interval = Long.parseLong(args.getOrDefault("interval-ms", "100"));
    AtomicBoolean running = new AtomicBoolean(true);
    Thread stdin = new Thread(() -> awaitStop(running), "fault-worker-stdin");
    stdin.setDaemon(true);
    stdin.start();
    print("WORKER STARTED " + worker.name);
    for (long seq = 1; running.get(); seq++) {
      worker.iteration(worker.name + ":" + seq);
      Thread.sleep(interval);
    }
    worker.producer.close(Duration.ofSeconds(1));
    worker.unfencedProducer.close(Duration.ofSeconds(1));
    print("IDLE " + worker.name);
    Thread.currentThread().join(); // drained: waits to be scraped and shut down
  }

  private void iteration(String id) {
    if (locks.isEmpty()) {
      String status = status();
      attempt(id, "pg", status, () -> pgWrite(id, "pg_total", "pg_write"));
      attempt(id, "mariadb", status, () -> mariaWrite(id, "maria_write"));
      attempt(id, "http", status, () -> httpWrite(id));
      attempt(id, "kafka", status, () -> kafkaWrite(id));
      attempt(id, "pg-unfenced", status, () -> pgUnfencedWrite(id));
      attempt(id, "http-unfenced", status, () -> httpUnfencedWrite(id));
      attempt(id, "kafka-unfenced", status, () -> kafkaUnfencedWrite(id));
      return;
    }
    String body = statusBody();
    for (int i = 1; i <= locks.size(); i++) {
      int section = i;
      String lock = locks.get(i - 1);
      String lid = id + "/" + lock;
      String status = lockStatus(body, lock) + " " + lock;
      attempt(lid, "pg", status, () -> FaultSections.run(section, () -> pgWrite(lid, "pg_total_" + section,
          "pg_write_" + section)));
      attempt(lid, "mariadb", status, () -> FaultSections.run(section, () -> mariaWrite(lid, "maria_write_"
          + section)));
      attempt(lid, "http", status, () -> FaultSections.run(section, () -> httpWrite(lid)));
      attempt(lid, "kafka", status, () -> FaultSections.run(section, () -> kafkaWrite(lid)));
      attempt(lid, "pg-unfenced", status, () -> FaultSections.run(section, () -> pgUnfencedWrite(lid)));
      attempt(lid, "http-unfenced", status, () -> FaultSections.run(section, () -> httpUnfencedWrite(lid)));
      attempt(lid, "kafka-unfenced", status, () -> FaultSections.run(section, () -> kafkaUnfencedWrite(lid)));
    }
  }

  private interface Write {
    String run() throws Exception;
  }

  private static void attempt(String id, String channel, String status, Write write) {
    print("ATTEMPT " + now() + " " + id + " " + channel + " " + status);
    String result;
    try {
      result = write.run();
    } catch (SQLException e) {
      result = "SQLSTATE " + e.getSQLState() + " " + firstLine(e.getMessage());
    } catch (ExecutionException e) {
      result = exception(e.getCause() == null ? e : e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      result = exception(e);
    } catch (Exception e) {
      result = exception(e);
    }
    print("OUTCOME " + now() + " " + id + " " + channel + " " + result);
  }

  /** Epoch milliseconds of the real time, from the monotonic clock (see {@link #EPOCH_MS}). */
  static long now() {
    return EPOCH_MS + (System.nanoTime() - EPOCH_NANOS) / 1_000_000;
  }

  /** {@code <state> <token>} from the agent's status endpoint, or {@code UNKNOWN 0}. */
  private String status() {
    return lockStatus(statusBody(), null);
  }

  /** The agent's /status, or null. */
  private String statusBody() {
    try {
      return http.send(HttpRequest.newBuilder(statusUri).timeout(Duration.ofSeconds(1)).GET()
          .build(), HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** {@code <state> <token>} of {@code lock}'s entry in {@code locks[]} (null: the top level), or {@code UNKNOWN 0}. */
  static String lockStatus(String body, String lock) {
    if (body == null) {
      return "UNKNOWN 0";
    }
    String entry = body;
    if (lock != null) {
      int at = body.indexOf("{\"lock\":\"" + lock + "\"", Math.max(0, body.indexOf("\"locks\":[")));
      if (at < 0) {
        return "UNKNOWN 0";
      }
      entry = body.substring(at);
    }
    Matcher state = STATE.matcher(entry);
    Matcher token = TOKEN.matcher(entry);
    return (state.find() ? state.group(1) : "UNKNOWN") + " " + (token.find() ? token.group(1) : "0");
  }

  private String pgWrite(String id, String totalTable, String writeTable) throws SQLException {
    if (pg == null || pg.isClosed()) {
      pg = DriverManager.getConnection(pgUrl);
    }
    Connection c = pg;
    try {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement();
          PreparedStatement insert = c.prepareStatement("INSERT INTO " + writeTable
              + " (write_id, worker) VALUES (?, ?)")) {
        s.executeUpdate("UPDATE " + totalTable + " SET n = n + 1 WHERE id = 1");
        s.execute("SELECT pg_sleep(0.02)");
        insert.setString(1, id);
        insert.setString(2, name);
        insert.executeUpdate();
      }
      c.commit();
      return "OK";
    } catch (SQLException e) {
      reset(c, e);
      throw e;
    }
  }

  private String mariaWrite(String id, String table) throws SQLException {
    if (maria == null || maria.isClosed()) {
      maria = DriverManager.getConnection(mariaUrl);
    }
    try (PreparedStatement insert = maria.prepareStatement(
        "INSERT INTO " + table + " (write_id, worker) VALUES (?, ?)")) {
      insert.setString(1, id);
      insert.setString(2, name);
      insert.executeUpdate();
      return "OK";
    } catch (SQLException e) {
      reset(maria, e);
      throw e;
    }
  }

  /** Rolls back what a failed statement left; a broken connection is closed and reopened on the next write. */
  private static void reset(Connection c, SQLException e) {
    try {
      if (e.getSQLState() != null && e.getSQLState().startsWith("08")) {
        c.close();
      } else if (!c.getAutoCommit()) {
        c.rollback();
      }
    } catch (SQLException ignored) {
      try {
        c.close();
      } catch (SQLException alsoIgnored) {
        // gone
      }
    }
  }

  private String httpWrite(String id) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(httpUri).timeout(Duration.ofSeconds(5))
        .POST(HttpRequest.BodyPublishers.ofString(id)).build(), HttpResponse.BodyHandlers.ofString());
    return r.statusCode() == 200 ? "OK" : "HTTP " + r.statusCode() + " " + firstLine(r.body());
  }

  private String kafkaWrite(String id) throws InterruptedException, ExecutionException, TimeoutException {
    producer.send(new ProducerRecord<>(topic, id, id)).get(10, TimeUnit.SECONDS);
    return "OK";
  }

  /** The connection to the unfenced table, opened when needed (autocommit unless a caller changes it). */
  private Connection pgUnfenced() throws SQLException {
    if (pgUnfenced == null || pgUnfenced.isClosed()) {
      pgUnfenced = DriverManager.getConnection(pgDirectUrl);
    }
    return pgUnfenced;
  }

  private String pgUnfencedWrite(String id) throws SQLException {
    Connection c = pgUnfenced();
    try {
      c.setAutoCommit(true);
      insertUnfenced(c, id);
      return "OK";
    } catch (SQLException e) {
      reset(c, e);
      throw e;
    }
  }

  private void insertUnfenced(Connection c, String id) throws SQLException {
    try (PreparedStatement insert = c.prepareStatement("INSERT INTO pg_unfenced (write_id, worker) VALUES (?, ?)")) {
      insert.setString(1, id);
      insert.setString(2, name);
      insert.executeUpdate();
    }
  }

  private String httpUnfencedWrite(String id) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(unfencedHttpUri).timeout(Duration.ofSeconds(5))
        .POST(HttpRequest.BodyPublishers.ofString(id)).build(), HttpResponse.BodyHandlers.ofString());
    return r.statusCode() == 200 ? "OK" : "HTTP " + r.statusCode() + " " + firstLine(r.body());
  }

  private String kafkaUnfencedWrite(String id) throws InterruptedException, ExecutionException, TimeoutException {
    unfencedProducer.send(new ProducerRecord<>(unfencedTopic, id, id)).get(10, TimeUnit.SECONDS);
    return "OK";
  }

  /** The exception and its causes' class names joined by '<', then the first line of its message. */
  private static String exception(Throwable e) {
    StringBuilder classes = new StringBuilder(e.getClass().getName());
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      classes.append('<').append(c.getClass().getName());
    }
    return "EXC " + classes + " " + firstLine(e.getMessage());
  }

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

  private static synchronized void print(String line) {
    System.out.println(line);
    System.out.flush();
  }

  private static String required(Map<String, String> args, String key) {
    String value = args.get(key);
    if (value == null) {
      throw new IllegalArgumentException("missing argument " + key + "=...");
    }
    return value;
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
