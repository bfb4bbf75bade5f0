package dev.fencing.agent.it.outbox;

import static dev.fencing.agent.it.Checks.awaitCount;
import static dev.fencing.agent.it.Checks.count;
import static dev.fencing.agent.it.Checks.strings;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.jdbc.JdbcIT.JdbcJvm;
import dev.fencing.fence.sql.OutboxInstaller;
import dev.fencing.fence.sql.ProcessedEvents;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.SqlOutbox;
import dev.fencing.fence.sql.TableName;
import dev.fencing.protocol.HttpHeaderNames;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.PgBouncer;
import dev.fencing.testing.PostgresServer;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tokened outbox as production runs it: the application, its relay and the receiver log in as roles of their own
 * with only the rights docs/reference/outbox.md gives them (none owns a table, none is a superuser), and the
 * application and the relay reach PostgreSQL through PgBouncer in transaction mode (PgBouncer over TCP, or over
 * PostgreSQL's Unix socket). A holder frozen inside its transaction (business row written, event not yet) resumes
 * after its successor committed: its event insert fails, and neither its business row nor its event exists. The
 * successor's event reaches a real HTTP receiver, which applies it once through its processed-events table. The
 * relay ({@code outbox relay}, LISTEN on by default) notices that no notification passes the pooler and polls.
 */
class OutboxPoolerIT {
  private static final String LOCK = "ledger";
  private static final Duration WAIT = Duration.ofSeconds(20);

  private static EtcdCluster etcd;
  private static PostgresServer pg;
  private static final Map<PgBouncer.Backend, PgBouncer> BOUNCERS = new EnumMap<>(PgBouncer.Backend.class);
  private static HttpServer receiver;
  /** Each request the receiver got: event id, token, and whether its mark was the first. */
  private static final List<String> received = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void servers() throws Exception {
    etcd = EtcdCluster.single();
    pg = PostgresServer.start();
    for (PgBouncer.Backend backend : PgBouncer.Backend.values()) {
      BOUNCERS.put(backend, PgBouncer.start(pg, "transaction", backend, 3, "app", "relay", "receiver"));
    }
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
      // The DBA's part, as the owner: the business table and the outbox with their fences, the receiver's table.
      s.execute("CREATE TABLE ledger (id bigserial PRIMARY KEY, writer text NOT NULL)");
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("ledger"), LOCK, false, false));
      new OutboxInstaller(c).install(new SqlOutbox(TableName.parse("outbox"), LOCK));
      new OutboxInstaller(c).installProcessedEvents(TableName.parse("processed_events"));
      for (String role : List.of("app", "relay", "receiver")) {
        s.execute("CREATE ROLE " + role + " LOGIN");
      }
      // The rights the reference documents, and no more.
      s.execute("GRANT INSERT ON ledger TO app");
      s.execute("GRANT USAGE ON SEQUENCE ledger_id_seq TO app");
      s.execute("GRANT INSERT ON outbox TO app");
      s.execute("GRANT SELECT, UPDATE (state, attempts, next_attempt_at, delivered_at, last_error, claimed_by,"
          + " claimed_until) ON outbox TO relay");
      s.execute("GRANT SELECT, INSERT ON processed_events TO receiver");
    }
    String receiverUrl = BOUNCERS.get(PgBouncer.Backend.TCP).jdbcUrl("postgres", "receiver");
    receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.setExecutor(Executors.newFixedThreadPool(2));
    receiver.createContext("/hook", exchange -> {
      exchange.getRequestBody().readAllBytes();
      String eventId = exchange.getRequestHeaders().getFirst(HttpHeaderNames.IDEMPOTENCY_KEY);
      int status = 204;
      try (Connection c = DriverManager.getConnection(receiverUrl)) {
        c.setAutoCommit(false);
        boolean first = ProcessedEvents.markFirst(c, "processed_events", eventId);
        c.commit();
        received.add(eventId + " " + exchange.getRequestHeaders().getFirst(HttpHeaderNames.TOKEN) + " " + first);
      } catch (SQLException e) {
        received.add(eventId + " failed " + e.getMessage());
        status = 500;
      }
      exchange.sendResponseHeaders(status, -1);
      exchange.close();
    });
    receiver.start();
  }

  @AfterAll
  static void stopServers() {
    if (receiver != null) {
      receiver.stop(0);
    }
    BOUNCERS.values().forEach(PgBouncer::close);
    if (pg != null) {
      pg.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  /** PgBouncer to PostgreSQL over TCP on the newest Java, over the Unix socket on this build's. */
  static List<Arguments> cases() {
    List<Arguments> out = new ArrayList<>();
    out.add(Arguments.of(PgBouncer.Backend.TCP, AgentProcesses.newestJava().get(0)));
    out.add(Arguments.of(PgBouncer.Backend.UNIX_SOCKET, AgentProcesses.javaHomes().get(0)));
    return out;
  }

  @ParameterizedTest(name = "PgBouncer to PostgreSQL over {0}, on {1}")
  @MethodSource("cases")
  void aStaleHoldersTransactionRollsBackWholeAndTheSuccessorsEventIsDeliveredOnce(PgBouncer.Backend backend,
      Path javaHome) throws Exception {
    PgBouncer bouncer = BOUNCERS.get(backend);
    String tag = backend.name().toLowerCase(Locale.ROOT);
    String hook = "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook";
    String args = "lock=" + LOCK + ",lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints=" + etcd.endpoints();
    String driver = System.getProperty("fencing.it.postgresql.jar");
    String cp = AgentProcesses.appClasspath() + File.pathSeparator + driver;
    String appUrl = bouncer.jdbcUrl("postgres", "app");
    String event = "SQL INSERT INTO outbox (channel, target, payload) VALUES ('http', '" + hook + "', '%s')";

    try (AgentJvm relay = AgentJvm.builder().name("outbox-relay-" + tag).javaHome(javaHome).noAgent()
            .executableJar(Path.of(System.getProperty("fencing.agent.jar")))
            .args("outbox", "relay", "--jdbc-url", bouncer.jdbcUrl("postgres", "relay"), "--driver-jar", driver,
                "--table", "outbox", "--relay-id", "relay-" + tag)
            .start();
        JdbcJvm a = new JdbcJvm(javaHome, "outbox-pooler-a-" + tag, args, appUrl, cp)) {
      long tokenA = Long.parseLong(Http.jsonField(
          Http.awaitStatus(a.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token"));
      try (JdbcJvm b = new JdbcJvm(javaHome, "outbox-pooler-b-" + tag, args, appUrl, cp)) {
        Http.awaitStatus(b.port, "\"state\":\"STANDBY\"", Duration.ofSeconds(15));

        // A's transaction: the business row, then a freeze past its TTL before the event. Its open transaction holds
        // the fence's row, so PostgreSQL ends it after the idle-in-transaction timeout the agent set (the TTL), and
        // B's writes go on; the pooler passes the end on to A.
        assertThat(a.run("BEGIN")).isEqualTo("OK begun");
        assertThat(a.run("SQL INSERT INTO ledger (writer) VALUES ('a-" + tag + "')")).isEqualTo("OK 1");
        a.jvm.suspend();
        long tokenB = Long.parseLong(Http.jsonField(
            Http.awaitStatus(b.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token"));
        assertThat(tokenB).isGreaterThan(tokenA);
        assertThat(b.run("BEGIN")).isEqualTo("OK begun");
        assertThat(b.run("SQL INSERT INTO ledger (writer) VALUES ('b-" + tag + "')")).isEqualTo("OK 1");
        assertThat(b.run(String.format(event, "b-" + tag))).isEqualTo("OK 1");
        assertThat(b.run("COMMIT")).isEqualTo("OK committed");
        a.jvm.resume();

        String stale = a.run(String.format(event, "a-" + tag));
        assertThat(stale).as("the resumed holder's event insert").startsWith("ERR");
        a.run("ROLLBACK");

        String eventB;
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
          eventB = strings(c, "SELECT event_id || ' ' || token FROM outbox WHERE payload = 'b-" + tag + "'").get(0);
          assertThat(eventB).endsWith(" " + tokenB);
          assertThat(count(c, "SELECT count(*) FROM ledger WHERE writer = 'a-" + tag + "'"))
              .as("the stale holder's business row went with its transaction").isZero();
          assertThat(count(c, "SELECT count(*) FROM outbox WHERE payload = 'a-" + tag + "'"))
              .as("and its event never existed").isZero();
          assertThat(count(c, "SELECT count(*) FROM ledger WHERE writer = 'b-" + tag + "'")).isEqualTo(1);
        }
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (received.stream().noneMatch(r -> r.startsWith(eventB)) && System.nanoTime() < deadline) {
          Thread.sleep(50);
        }
        assertThat(received).as(relay.output()).contains(eventB + " true");
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
          awaitCount(c, "SELECT count(*) FROM outbox WHERE payload = 'b-" + tag
              + "' AND state = 'delivered'", 1, Duration.ofSeconds(10));
        }
        Thread.sleep(300); // a second delivery would come now, if any
        assertThat(received.stream().filter(r -> r.startsWith(eventB.split(" ")[0] + " "))).as("delivered once")
            .hasSize(1);
        assertThat(relay.output()).contains("LISTEN on outbox gets no notification", "polling every 1000 ms")
            .doesNotContain("relay cycle failed", "permission denied");
      }
    }
  }
}
