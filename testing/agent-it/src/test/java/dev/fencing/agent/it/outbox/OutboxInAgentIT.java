package dev.fencing.agent.it.outbox;

import static dev.fencing.agent.it.Checks.awaitCount;
import static dev.fencing.agent.it.Checks.count;
import static dev.fencing.agent.it.Checks.strings;
import static dev.fencing.agent.it.SpringReplicas.schemaOfTheApp;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.fence.sql.OutboxInstaller;
import dev.fencing.fence.sql.SqlOutbox;
import dev.fencing.fence.sql.TableName;
import dev.fencing.protocol.HttpHeaderNames;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.SpringApp;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The relay inside the Spring Boot sample's replicas ({@code fencing.outbox.*}), with the agent: the outbox profile's
 * {@code @Transactional} payment writes its row and, through the {@code FencingOutbox} bean, its webhook event to the
 * fenced outbox table; a relay delivers it to a real HTTP receiver with the row's Fencing-Token, Fencing-Lock,
 * Fencing-Grant and Idempotency-Key. The relay of a replica on standby delivers the holder's events (its own lease
 * neither tags nor blocks them), and a holder frozen past its TTL inside the payment's transaction, whose successor
 * then paid, loses the whole transaction: its payment and its event never exist, so no relay can deliver it.
 */
class OutboxInAgentIT {
  private static final String LOCK = "payments";
  private static final Duration START = Duration.ofSeconds(90);

  private static EtcdCluster etcd;
  private static PostgresServer pg;
  private static HttpServer receiver;
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
    }
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
}
