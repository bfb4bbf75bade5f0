package dev.fencing.agent.it.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.protocol.HttpHeaderNames;
import dev.fencing.protocol.KafkaHeaderNames;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.Http;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PostgresServer;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar fencing-agent.jar outbox relay} in forked JVMs against a real PostgreSQL outbox, a JDK HttpServer
 * receiver and a real Kafka broker: a relay killed with SIGKILL between its delivery and its mark leaves a claim that
 * expires, after which a second relay delivers the event again (same Idempotency-Key, applied once by the receiver);
 * the second relay also relays Kafka records through the jars given with --kafka-jar, serves its metrics, and stops
 * cleanly on SIGTERM.
 */
class OutboxRelayCliIT {
  private static final String LOCK = "shop";
  private static final Duration WAIT = Duration.ofSeconds(60);

  private static AgentJvm.Builder cli(String name, String... args) {
    String[] all = new String[args.length + 2];
    all[0] = "outbox";
    all[1] = "relay";
    System.arraycopy(args, 0, all, 2, args.length);
    return AgentJvm.builder().name(name).noAgent().executableJar(Path.of(System.getProperty("fencing.agent.jar")))
        .args(all);
  }

  @Test
  void aKilledRelaysClaimExpiresAndAnotherRelayDeliversTheEventAgainUnderTheSameKey() throws Exception {
    List<String> keys = java.util.Collections.synchronizedList(new ArrayList<>());
    CountDownLatch firstArrived = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.setExecutor(Executors.newCachedThreadPool());
    receiver.createContext("/", exchange -> {
      exchange.getRequestBody().readAllBytes();
      boolean first;
      synchronized (keys) {
        keys.add(exchange.getRequestHeaders().getFirst(HttpHeaderNames.IDEMPOTENCY_KEY) + " "
            + exchange.getRequestHeaders().getFirst(HttpHeaderNames.TOKEN));
        first = keys.size() == 1;
      }
      if (first) {
        firstArrived.countDown();
        try {
          never.await(); // the first relay never hears back: it is killed while it waits
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      exchange.sendResponseHeaders(204, -1);
      exchange.close();
    });
    receiver.start();
    String hook = "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook";
    try (PostgresServer pg = PostgresServer.start(); KafkaBroker kafka = KafkaBroker.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      String driver = System.getProperty("fencing.it.postgresql.jar");
      installOutbox(url, driver);
      String eventId;
      try (Connection c = writer(url)) {
        eventId = insert(c, "http", hook, null, "{\"order\":1}");
        c.commit();
      }

      String[] common = {"--jdbc-url", url, "--driver-jar", driver, "--table", "outbox", "--claim-timeout", "4s",
          "--request-timeout", "3s", "--poll-interval", "500ms"};
      try (AgentJvm first = cli("relay-a", concat(common, "--relay-id", "relay-a")).start()) {
        assertThat(firstArrived.await(60, java.util.concurrent.TimeUnit.SECONDS)).as(first.output()).isTrue();
        first.process().destroyForcibly(); // SIGKILL
        assertThat(first.awaitExit(Duration.ofSeconds(10))).isEqualTo(137);
      }
      long killed = System.nanoTime();
      assertThat(column(url, eventId, "claimed_by")).isEqualTo("relay-a");
      assertThat(column(url, eventId, "state")).isEqualTo("pending");

      kafka.createTopic("payments", 1);
      String kafkaJars = kafkaJars();
      try (AgentJvm second = cli("relay-b", concat(common, "--relay-id", "relay-b", "--metrics-port", "0",
          "--kafka-bootstrap", kafka.bootstrapServers(), "--kafka-jar", kafkaJars)).start()) {
        await("the second delivery", () -> keys.size() == 2);
        long afterKill = (System.nanoTime() - killed) / 1_000_000;
        assertThat(List.copyOf(keys)).as("the same Idempotency-Key and the row's token, twice").containsExactly(
            eventId + " 5", eventId + " 5");
        assertThat(afterKill).as("ms from the kill to the second delivery: not before the claim expired")
            .isGreaterThan(2000);
        await("delivered", () -> "delivered".equals(column(url, eventId, "state")));
        assertThat(column(url, eventId, "claimed_by")).isNull();

        String kafkaEvent;
        try (Connection c = writer(url)) {
          kafkaEvent = insert(c, "kafka", "payments", "order-1", "paid");
          c.commit();
        }
        ConsumerRecord<String, String> record = consumeOne(kafka.bootstrapServers(), "payments");
        assertThat(record.key()).isEqualTo("order-1");
        assertThat(record.value()).isEqualTo("paid");
        assertThat(header(record, KafkaHeaderNames.FENCING)).isEqualTo("5;" + LOCK + ";g-5");
        assertThat(header(record, KafkaHeaderNames.EVENT_ID)).isEqualTo(kafkaEvent);

        Matcher port = Pattern.compile("metrics on http://0\\.0\\.0\\.0:(\\d+)/metrics")
            .matcher(second.awaitOutput("/metrics", Duration.ofSeconds(10)));
        assertThat(port.find()).isTrue();
        String metricsUrl = "http://127.0.0.1:" + port.group(1) + "/metrics";
        await("metrics", () -> Http.get(metricsUrl).contains("channel=\"kafka\",outcome=\"delivered\"} 1"));
        assertThat(Http.get(metricsUrl))
            .contains("fencing_outbox_deliveries_total{table=\"outbox\",channel=\"http\",outcome=\"delivered\"} 1")
            .contains("fencing_outbox_events_parked{table=\"outbox\"} 0");

        second.process().destroy(); // SIGTERM
        assertThat(second.awaitExit(Duration.ofSeconds(20))).isEqualTo(143);
        assertThat(second.output()).contains("relay relay-b stopped");
      }
    } finally {
      never.countDown();
      receiver.stop(0);
    }
  }

  @Test
  void badArgumentsExitTwoNamingTheOption() {
    try (AgentJvm bad = cli("relay-bad", "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/x", "--table", "outbox",
        "--poll-interval", "soon").start()) {
      assertThat(bad.awaitExit(Duration.ofSeconds(60))).isEqualTo(2);
      assertThat(bad.output()).contains("outbox: --poll-interval: a positive duration such as 500ms, 10s or 5m "
          + "expected, got 'soon'");
    }
  }

  private static void installOutbox(String url, String driver) {
    try (AgentJvm install = AgentJvm.builder().name("sql-install-outbox").noAgent()
        .executableJar(Path.of(System.getProperty("fencing.agent.jar")))
        .args("sql", "install", "--jdbc-url", url, "--driver-jar", driver, "--outbox", "outbox", "--lock", LOCK)
        .start()) {
      assertThat(install.awaitExit(Duration.ofSeconds(60))).as(install.output()).isZero();
    }
  }

  /** A connection with the session values the agent sets for the lock's holder, token 5, grant g-5. */
  private static Connection writer(String url) throws SQLException {
    Connection c = DriverManager.getConnection(url);
    try (PreparedStatement ps = c.prepareStatement("SELECT set_config('fencing.lock', ?, false),"
        + " set_config('fencing.token', '5', false), set_config('fencing.grant', 'g-5', false)")) {
      ps.setString(1, LOCK);
      ps.execute();
    }
    c.setAutoCommit(false);
    return c;
  }

  /** The plain SQL an application writes; the event id is the database's. */
  private static String insert(Connection c, String channel, String target, String key, String payload)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox (channel, target, message_key, payload)"
        + " VALUES (?, ?, ?, ?) RETURNING event_id")) {
      ps.setString(1, channel);
      ps.setString(2, target);
      ps.setString(3, key);
      ps.setString(4, payload);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  private static String column(String url, String eventId, String column) {
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement ps = c.prepareStatement("SELECT " + column + " FROM outbox WHERE event_id = ?")) {
      ps.setString(1, eventId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** kafka-clients (the newest tested) and slf4j-api, as an operator passes them. */
  private static String kafkaJars() throws Exception {
    String version = System.getProperty("fencing.it.kafka.clients.latest");
    Path dir = AgentProcesses.libraryJars("kafka-clients", version);
    Path clients;
    try (Stream<Path> jars = Files.list(dir)) {
      clients = jars.filter(p -> p.getFileName().toString().equals("kafka-clients-" + version + ".jar")).findFirst()
          .orElseThrow(() -> new AssertionError("no kafka-clients-" + version + ".jar in " + dir));
    }
    return clients + File.pathSeparator + System.getProperty("fencing.it.slf4j.jar");
  }

  private static ConsumerRecord<String, String> consumeOne(String bootstrap, String topic) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("group.id", "outbox-cli-it");
    p.put("auto.offset.reset", "earliest");
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
        new StringDeserializer())) {
      consumer.subscribe(List.of(topic));
      long end = System.nanoTime() + WAIT.toNanos();
      while (System.nanoTime() < end) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          return r;
        }
      }
    }
    throw new AssertionError("no record on " + topic + " within " + WAIT);
  }

  private static String header(ConsumerRecord<String, String> r, String name) {
    org.apache.kafka.common.header.Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  private static String[] concat(String[] a, String... b) {
    String[] all = new String[a.length + b.length];
    System.arraycopy(a, 0, all, 0, a.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }

  private static void await(String what, BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + WAIT.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("not within " + WAIT + ": " + what);
      }
      Thread.sleep(50);
    }
  }

}
