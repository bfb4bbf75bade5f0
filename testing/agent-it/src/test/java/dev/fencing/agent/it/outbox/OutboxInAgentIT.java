package dev.fencing.agent.it.outbox;

import static dev.fencing.agent.it.Checks.awaitCount;
import static dev.fencing.agent.it.Checks.count;
import static dev.fencing.agent.it.Checks.strings;
import static dev.fencing.agent.it.SpringReplicas.schemaOfTheApp;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.apps.HelloApp;
import dev.fencing.fence.sql.OutboxInstaller;
import dev.fencing.fence.sql.SqlOutbox;
import dev.fencing.fence.sql.TableName;
import dev.fencing.protocol.HttpHeaderNames;
import dev.fencing.protocol.KafkaHeaderNames;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.SpringApp;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The relay inside the Spring Boot sample's replicas ({@code fencing.outbox.*}), with the agent: the outbox profile's
 * {@code @Transactional} payment writes its row and, through the {@code FencingOutbox} bean, its webhook event to the
 * fenced outbox table; a relay delivers it to a real HTTP receiver with the row's Fencing-Token, Fencing-Lock,
 * Fencing-Grant and Idempotency-Key. The relay of a replica on standby delivers the holder's events (its own lease
 * neither tags nor blocks them), and a holder frozen past its TTL inside the payment's transaction, whose successor
 * then paid, loses the whole transaction: its payment and its event never exist, so no relay can deliver it. The
 * relay's series are on the agent's own /metrics. A relay inside a plain application with kafka-clients delivers
 * Kafka events to a real broker with each row's own token, lock, grant and event id, also while the JVM's own lease
 * has expired.
 */
class OutboxInAgentIT {
  private static final String LOCK = "payments";
  /** The Kafka case's lock and outbox table, apart from the Spring replicas'. */
  private static final String KAFKA_LOCK = "ledger";
  private static final String KAFKA_OUTBOX = "ledger_outbox";
  private static final String TOPIC = "ledger-events";
  private static final Duration START = Duration.ofSeconds(90);

  private static EtcdCluster etcd;
  private static PostgresServer pg;
  private static HttpServer receiver;
  private static KafkaBroker broker;
  private static final List<Delivery> deliveries = new CopyOnWriteArrayList<>();

  /** One request the receiver got. */
  record Delivery(String eventId, String token, String lock, String grant, String body) {}

  @BeforeAll
  static void servers() throws Exception {
    etcd = EtcdCluster.single();
    pg = PostgresServer.start();
    try (Connection c = connect(); Statement s = c.createStatement()) {
      s.execute(schemaOfTheApp());
      // The DBA's part: the outbox table, with its fence for the lock.
      new OutboxInstaller(c).install(new SqlOutbox(TableName.parse("outbox"), LOCK));
      new OutboxInstaller(c).install(new SqlOutbox(TableName.parse(KAFKA_OUTBOX), KAFKA_LOCK));
    }
    broker = KafkaBroker.start();
    broker.createTopic(TOPIC, 1);
    receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.setExecutor(Executors.newFixedThreadPool(2));
    receiver.createContext("/hook", exchange -> {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      var h = exchange.getRequestHeaders();
      deliveries.add(new Delivery(h.getFirst(HttpHeaderNames.IDEMPOTENCY_KEY), h.getFirst(HttpHeaderNames.TOKEN),
          h.getFirst(HttpHeaderNames.LOCK), h.getFirst(HttpHeaderNames.GRANT), body));
      exchange.sendResponseHeaders(204, -1);
      exchange.close();
    });
    receiver.start();
  }

  @AfterAll
  static void stopServers() {
    if (receiver != null) {
      receiver.stop(0);
    }
    if (broker != null) {
      broker.close();
    }
    if (pg != null) {
      pg.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  private static Connection connect() throws Exception {
    return DriverManager.getConnection(pg.jdbcUrl(), pg.user(), "");
  }

  /** A replica of the sample with the agent (lock payments, 3 s TTL), the outbox profile, and its relay on or off. */
  private static AgentJvm replica(Path javaHome, String name, int appPort, int agentPort, boolean relay) {
    AgentJvm.Builder b = SpringApp.launcher(SpringApp.fatJar(), appPort, name, pg.jdbcUrl(), pg.user())
        .javaHome(javaHome).name("spring-" + name)
        .agentArgs("lock=" + LOCK + ",lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints=" + etcd.endpoints()
            + ",http.port=" + agentPort)
        .jvmArg("-Dapp.outbox.enabled=true")
        .jvmArg("-Dapp.outbox.webhook=http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook")
        .jvmArg("-Dspring.sql.init.mode=never")
        .jvmArg("-Dapp.settlement.initial-delay-ms=3600000");
    if (relay) {
      b.jvmArg("-Dfencing.outbox.enabled=true").jvmArg("-Dfencing.outbox.jdbc-url=" + pg.jdbcUrl())
          .jvmArg("-Dfencing.outbox.user=" + pg.user());
    }
    return b.start();
  }

  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  /** {@code POST /payments}: status and body (the event id); long enough for a payment frozen on its way. */
  private static HttpResponse<String> pay(int appPort, String order, long workMs) {
    HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + appPort + "/payments?order=" + order
        + "&workMs=" + workMs)).timeout(Duration.ofSeconds(40)).POST(HttpRequest.BodyPublishers.noBody()).build();
    try {
      return CLIENT.send(r, HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("POST /payments?order=" + order + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** The end of a replica's output without stack frames, for a failure's message. */
  private static String tail(AgentJvm jvm) {
    String out = String.join("\n", jvm.output().lines().filter(l -> !l.startsWith("\tat ")).toList());
    return "\n" + jvm + ":\n" + out.substring(Math.max(0, out.length() - 8000));
  }

  private static Delivery awaitDelivery(String eventId, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      for (Delivery d : deliveries) {
        if (eventId.equals(d.eventId())) {
          return d;
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("event " + eventId + " was not delivered within " + timeout + "; got " + deliveries);
  }

  @Test
  void aStandbyReplicaRelaysTheHoldersEventsAndAFrozenHoldersPaymentNeverLeaves() throws Exception {
    Path java17 = AgentProcesses.javaHomes().get(0);
    int appA = Ports.freePort();
    int agentA = Ports.freePort();
    int appB = Ports.freePort();
    int agentB = Ports.freePort();
    // A without a relay of its own, B (on standby) with one: whatever is delivered, B's relay delivered it.
    try (AgentJvm a = replica(java17, "replica-a", appA, agentA, false)) {
      String statusA = Http.awaitStatus(agentA, "\"state\":\"HOLDING\"", START);
      long tokenA = Long.parseLong(Http.jsonField(statusA, "token"));
      String grantA = Http.jsonField(statusA, "leaseId");
      try (AgentJvm b = replica(java17, "replica-b", appB, agentB, true); Connection c = connect()) {
        SpringApp.awaitStarted(a, appA, START);
        SpringApp.awaitStarted(b, appB, START);
        Http.awaitStatus(agentB, "\"state\":\"STANDBY\"", Duration.ofSeconds(10));

        HttpResponse<String> paid = pay(appA, "o1", 0);
        assertThat(paid.statusCode()).as(paid.body() + tail(a)).isEqualTo(201);
        Delivery first = awaitDelivery(paid.body(), Duration.ofSeconds(15));
        assertThat(first).as("the holder's committed event, relayed by the replica on standby")
            .isEqualTo(new Delivery(paid.body(), "" + tokenA, LOCK, grantA,
                "{\"order\":\"o1\",\"replica\":\"replica-a\"}"));
        assertThat(b.output()).as("the only relay: B's").contains("outbox: relay " + b.pid() + "@");
        assertThat(a.output()).doesNotContain("outbox: relay");
        awaitCount(c, "SELECT count(*) FROM outbox WHERE state = 'delivered'", 1, Duration.ofSeconds(5));

        // A pays o2 and, before its transaction commits, freezes past its TTL; B takes over and pays o3.
        CompletableFuture<HttpResponse<String>> frozen = CompletableFuture.supplyAsync(() -> pay(appA, "o2", 8000));
        a.awaitOutput("payment of o2 written", Duration.ofSeconds(10));
        a.suspend();
        String statusB = Http.awaitStatus(agentB, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
        long tokenB = Long.parseLong(Http.jsonField(statusB, "token"));
        assertThat(tokenB).isGreaterThan(tokenA);
        HttpResponse<String> successor = pay(appB, "o3", 0);
        assertThat(successor.statusCode()).as(successor.body() + tail(b)).isEqualTo(201);
        a.resume();

        HttpResponse<String> stale = frozen.get(30, TimeUnit.SECONDS);
        assertThat(stale.statusCode()).as("the frozen holder's payment: " + stale.body()).isEqualTo(500);
        Delivery third = awaitDelivery(successor.body(), Duration.ofSeconds(15));
        assertThat(third).isEqualTo(new Delivery(successor.body(), "" + tokenB, LOCK,
            Http.jsonField(statusB, "leaseId"), "{\"order\":\"o3\",\"replica\":\"replica-b\"}"));
        assertThat(count(c, "SELECT count(*) FROM payment WHERE order_ref = 'o2'"))
            .as("the frozen holder's payment rolled back").isZero();
        assertThat(count(c, "SELECT count(*) FROM outbox WHERE payload LIKE '%o2%'"))
            .as("and its event with it: no relay can ever deliver it").isZero();
        assertThat(deliveries).extracting(Delivery::body).noneMatch(body -> body.contains("o2"));
        assertThat(strings(c, "SELECT order_ref || ':' || token_seen FROM payment ORDER BY id"))
            .containsExactly("o1:" + tokenA, "o3:" + tokenB);

        // B's relay delivered every event: its series on B's own /metrics say so, and that none is left.
        long received = deliveries.stream()
            .filter(d -> d.eventId().equals(paid.body()) || d.eventId().equals(successor.body())).count();
        assertThat(received).isEqualTo(2);
        awaitMetric(agentB, received, "fencing_outbox_deliveries_total", "channel=\"http\"", "outcome=\"delivered\"",
            "table=\"outbox\"");
        String metrics = awaitMetric(agentB, 0, "fencing_outbox_events_pending", "table=\"outbox\"");
        assertThat(metric(metrics, "fencing_outbox_deliveries_total",
            "channel=\"http\"", "outcome=\"failed\"", "table=\"outbox\"")).isZero();
        assertThat(metric(metrics, "fencing_outbox_events_parked", "table=\"outbox\"")).isZero();
        assertThat(metric(metrics, "fencing_outbox_oldest_pending_age_seconds", "table=\"outbox\"")).isZero();
        assertThat(Http.get("http://127.0.0.1:" + agentA + "/metrics")).as("A runs no relay")
            .doesNotContain("fencing_outbox_");
      }
    }
  }

  @Test
  void onTheNewestJavaTheHoldersOwnRelayDeliversItsEvent() throws Exception {
    Path newest = AgentProcesses.newestJava().get(0);
    int app = Ports.freePort();
    int agent = Ports.freePort();
    try (AgentJvm a = replica(newest, "replica-c", app, agent, true)) {
      SpringApp.awaitStarted(a, app, START);
      String status = Http.awaitStatus(agent, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      HttpResponse<String> paid = pay(app, "o4", 0);
      assertThat(paid.statusCode()).as(paid.body() + tail(a)).isEqualTo(201);
      assertThat(awaitDelivery(paid.body(), Duration.ofSeconds(15))).isEqualTo(new Delivery(paid.body(),
          Http.jsonField(status, "token"), LOCK, Http.jsonField(status, "leaseId"),
          "{\"order\":\"o4\",\"replica\":\"replica-c\"}"));
      assertThat(a.output()).contains("outbox: relay").doesNotContain("Fencing Agent blocked");
    }
  }

  /**
   * A plain application with kafka-clients and the PostgreSQL driver on its class path, the agent holding lock
   * {@value #KAFKA_LOCK} and the relay of {@value #KAFKA_OUTBOX} on: the relay's producer is the application's
   * kafka-clients, woven by the agent's Kafka hooks. An event of its own lease and then, with etcd stopped and its
   * lease EXPIRED, an event a successor committed: both reach the broker with the row's token, lock, grant and event
   * id (the hooks neither block nor re-tag a committed event, nor hold its batch on the producer's I/O thread).
   */
  @Test
  void theRelayInsideAnAppDeliversKafkaEventsWithTheRowsTokenAlsoWhileItsOwnLeaseHasExpired() throws Exception {
    int agent = Ports.freePort();
    String classpath = AgentProcesses.appClasspath() + File.pathSeparator
        + AgentProcesses.libraries("kafka-clients-", "postgresql-") + File.pathSeparator
        + System.getProperty("fencing.it.slf4j.jar");
    try (AgentJvm app = AgentJvm.builder().javaHome(AgentProcesses.javaHomes().get(0)).name("kafka-relay")
        .agentArgs("lock=" + KAFKA_LOCK + ",lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints="
            + etcd.endpoints() + ",http.port=" + agent)
        .jvmArg("-Dfencing.outbox.enabled=true").jvmArg("-Dfencing.outbox.table=" + KAFKA_OUTBOX)
        .jvmArg("-Dfencing.outbox.jdbc-url=" + pg.jdbcUrl()).jvmArg("-Dfencing.outbox.user=" + pg.user())
        .jvmArg("-Dfencing.outbox.kafka-bootstrap=" + broker.bootstrapServers())
        .classpath(classpath).mainClass(HelloApp.class.getName()).args("600000").start();
        Connection c = connect()) {
      String status = Http.awaitStatus(agent, "\"state\":\"HOLDING\"", Duration.ofSeconds(20));
      long token = Long.parseLong(Http.jsonField(status, "token"));
      String grant = Http.jsonField(status, "leaseId");
      String own = writeKafkaEvent(c, token, grant, "own");
      ConsumerRecord<String, String> first = awaitRecords(1).get(0);
      assertThat(headers(first)).containsExactly("content-type=application/json",
          KafkaHeaderNames.FENCING + "=" + token + ";" + KAFKA_LOCK + ";" + grant, KafkaHeaderNames.EVENT_ID + "=" + own);

      etcd.stop();
      try {
        Http.awaitStatus(agent, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
        // A successor's committed event: a later token and a grant that is not this JVM's.
        String successors = writeKafkaEvent(c, token + 5, "5eccf00d", "successor");
        ConsumerRecord<String, String> second = awaitRecords(2).get(1);
        assertThat(second.key()).isEqualTo("account-7");
        assertThat(second.value()).isEqualTo("{\"paid\":\"successor\"}");
        assertThat(headers(second)).containsExactly("content-type=application/json",
            KafkaHeaderNames.FENCING + "=" + (token + 5) + ";" + KAFKA_LOCK + ";5eccf00d",
            KafkaHeaderNames.EVENT_ID + "=" + successors);
        awaitMetric(agent, 2, "fencing_outbox_deliveries_total", "channel=\"kafka\"", "outcome=\"delivered\"",
            "table=\"" + KAFKA_OUTBOX + "\"");
        assertThat(count(c, "SELECT count(*) FROM " + KAFKA_OUTBOX + " WHERE state = 'delivered'")).isEqualTo(2);
        assertThat(Http.get("http://127.0.0.1:" + agent + "/status")).as("delivered while the lease had expired")
            .contains("\"state\":\"EXPIRED\"");
      } finally {
        etcd.start();
      }
      String metrics = awaitMetric(agent, 0, "fencing_outbox_events_pending", "table=\"" + KAFKA_OUTBOX + "\"");
      assertThat(metric(metrics, "fencing_outbox_deliveries_total", "channel=\"kafka\"", "outcome=\"failed\"",
          "table=\"" + KAFKA_OUTBOX + "\"")).isZero();
      assertThat(app.output()).doesNotContain("Fencing Agent blocked");
      assertThat(app.output().lines().filter(l -> l.contains("outbox:") && l.contains("WARN")))
          .as("the relay's warnings").isEmpty();
    }
  }

  /** Writes one Kafka event into {@value #KAFKA_OUTBOX} as a holder of {@code token} would; its event id. */
  private static String writeKafkaEvent(Connection c, long token, String grant, String what) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("SELECT set_config('fencing.lock', ?, false), "
        + "set_config('fencing.token', ?, false), set_config('fencing.grant', ?, false)")) {
      ps.setString(1, KAFKA_LOCK);
      ps.setString(2, Long.toString(token));
      ps.setString(3, grant);
      ps.execute();
    }
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + KAFKA_OUTBOX
        + " (channel, target, message_key, headers, payload) VALUES ('kafka', ?, 'account-7', "
        + "'content-type: application/json', ?) RETURNING event_id")) {
      ps.setString(1, TOPIC);
      ps.setString(2, "{\"paid\":\"" + what + "\"}");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  /** The first {@code n} records of the topic, read by a real consumer as soon as they are there. */
  private static List<ConsumerRecord<String, String>> awaitRecords(int n) {
    TopicPartition tp = new TopicPartition(TOPIC, 0);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of("bootstrap.servers",
        broker.bootstrapServers(), "enable.auto.commit", "false"), new StringDeserializer(),
        new StringDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (records.size() < n) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("fewer than " + n + " records on " + TOPIC + " within 20 s; got " + records);
        }
        consumer.poll(Duration.ofMillis(100)).forEach(records::add);
      }
      return records;
    }
  }

  private static List<String> headers(ConsumerRecord<String, String> r) {
    List<String> out = new ArrayList<>();
    for (Header h : r.headers()) {
      out.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
    }
    return out;
  }

  private static final Pattern SAMPLE = Pattern.compile("(?m)^(\\w+)\\{([^}]*)\\} (\\S+)$");

  /** The value of the one sample of {@code name} whose labels include each of {@code labels} (name="value"). */
  private static double metric(String metrics, String name, String... labels) {
    Double found = null;
    Matcher m = SAMPLE.matcher(metrics);
    while (m.find()) {
      if (m.group(1).equals(name) && List.of(m.group(2).split(",")).containsAll(List.of(labels))) {
        assertThat(found).as("one sample of " + name + List.of(labels) + " in\n" + metrics).isNull();
        found = Double.parseDouble(m.group(3));
      }
    }
    assertThat(found).as("a sample of " + name + List.of(labels) + " in\n" + metrics).isNotNull();
    return found;
  }

  /**
   * The agent's /metrics once the sample has {@code value} (the relay counts a delivery when it marked it, and reads
   * the table's counts after its work).
   */
  private static String awaitMetric(int agentPort, double value, String name, String... labels)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (true) {
      String metrics = Http.get("http://127.0.0.1:" + agentPort + "/metrics");
      if (metrics.contains(name + "{") && metric(metrics, name, labels) == value
          || System.nanoTime() > deadline) {
        assertThat(metric(metrics, name, labels)).as(name + List.of(labels)).isEqualTo(value);
        return metrics;
      }
      Thread.sleep(100);
    }
  }
}
