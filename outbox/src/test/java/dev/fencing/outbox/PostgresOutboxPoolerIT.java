package dev.fencing.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.protocol.OutboxSchema;
import dev.fencing.testing.PgBouncer;
import dev.fencing.testing.PostgresServer;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The relay through a real PgBouncer in transaction mode, reaching PostgreSQL over TCP or over its Unix socket: each
 * of the relay's transactions may run on another server connection. LISTEN cannot work there (the LISTEN stays on a
 * server connection the pooler lends to others), so the relay has to notice and poll; and its claims and marks must
 * carry no session state from one transaction to the next, server-side prepared statements included.
 */
class PostgresOutboxPoolerIT extends RelayTestBase {
  private static PostgresServer server;
  private static final Map<PgBouncer.Backend, PgBouncer> BOUNCERS = new TreeMap<>();

  @BeforeAll
  static void startServers() {
    server = PostgresServer.start();
    for (PgBouncer.Backend backend : PgBouncer.Backend.values()) {
      BOUNCERS.put(backend, PgBouncer.start(server, "transaction", backend, 2));
    }
  }

  @AfterAll
  static void stopServers() {
    BOUNCERS.values().forEach(PgBouncer::close);
    if (server != null) {
      server.close();
    }
  }

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(server.jdbcUrl());
  }

  private OutboxRelay.Builder pooled(String url, String table) {
    return OutboxRelay.builder(() -> DriverManager.getConnection(url), table).claimTimeout(Duration.ofSeconds(10))
        .requestTimeout(Duration.ofSeconds(5)).log(new PrintStream(logs, true, StandardCharsets.UTF_8));
  }

  private String log() {
    return logs.toString(StandardCharsets.UTF_8);
  }

  /**
   * With its defaults (LISTEN, a 30 s safety poll) behind the pooler, the relay finds that no notification reaches it,
   * says so, and polls every second instead: an event committed afterwards is delivered within seconds.
   */
  @ParameterizedTest
  @EnumSource(PgBouncer.Backend.class)
  void aRelayBehindATransactionPoolerNoticesThatListenGetsNothingAndPolls(PgBouncer.Backend backend)
      throws Exception {
    String table = newTable();
    OutboxRelay relay = pooled(BOUNCERS.get(backend).jdbcUrl("postgres", "postgres"), table).build().start();
    relays.add(relay);
    Receiver.await("the relay's word on LISTEN", WAIT, () -> log().contains("no notification"));
    assertThat(log()).contains("LISTEN on " + table + " gets no notification", "polling every 1000 ms",
        "--no-listen");
    assertThat(relay.listening()).isFalse();

    transaction(3, null, true, c -> Outbox.post(c, table, receiver.uri("/after"), "x"));
    long committed = System.nanoTime();
    Receiver.await("delivered", Duration.ofSeconds(5), () -> receiver.requests().size() == 1);
    assertThat((receiver.requests().get(0).arrivedNanos() - committed) / 1_000_000)
        .as("commit to delivery, ms, polling every second").isLessThan(2500);
  }

  /**
   * Two relays share the work through a pool of two server connections, with a plain JDBC URL (pgjdbc would name its
   * server-side prepared statements after five runs, which a transaction pooler lends to other sessions): every event
   * is delivered once, each key in commit order, and no cycle fails.
   */
  @ParameterizedTest
  @EnumSource(PgBouncer.Backend.class)
  void twoRelaysBehindATransactionPoolerDeliverEachEventOnceInKeyOrder(PgBouncer.Backend backend) throws Exception {
    String table = newTable();
    String url = BOUNCERS.get(backend).jdbcUrl("postgres", "postgres").replace("&prepareThreshold=0", "");
    assertThat(url).doesNotContain("prepareThreshold");
    int keys = 3;
    int perKey = 12;
    for (int i = 0; i < perKey; i++) {
      int n = i;
      transaction(5, null, true, c -> {
        for (int k = 0; k < keys; k++) {
          Outbox.post(c, table, receiver.uri("/key-" + k), "" + n);
        }
      });
    }
    for (int r = 0; r < 2; r++) {
      relays.add(pooled(url, table).listen(false).pollInterval(Duration.ofMillis(100)).batchSize(2).concurrency(2)
          .build().start());
    }
    Receiver.await("all delivered", WAIT, () -> rowsQuietly(table).stream()
        .allMatch(row -> row.state().equals(OutboxSchema.DELIVERED)));

    assertThat(receiver.requests()).hasSize(keys * perKey);
    assertThat(receiver.applied()).hasSize(keys * perKey);
    for (int k = 0; k < keys; k++) {
      String path = "/key-" + k;
      List<String> bodies = receiver.requests().stream().filter(r -> r.path().equals(path))
          .map(Receiver.Request::body).toList();
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < perKey; i++) {
        expected.add("" + i);
      }
      assertThat(bodies).as("the bodies of " + path + " in arrival order").isEqualTo(expected);
    }
    assertThat(log()).doesNotContain("relay cycle failed", "claim expired");
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      assertThat(rs.getInt(1)).as("advisory locks left on server connections").isZero();
    }
  }
}
