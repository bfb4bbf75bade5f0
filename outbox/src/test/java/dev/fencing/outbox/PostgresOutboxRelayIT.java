package dev.fencing.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.protocol.OutboxSchema;
import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The relay's contract on a real PostgreSQL, and what only PostgreSQL has: LISTEN wakes the relay at commit. */
class PostgresOutboxRelayIT extends OutboxRelayContractIT {
  static PostgresServer server;

  @BeforeAll
  static void startServer() {
    server = PostgresServer.start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(server.jdbcUrl());
  }

  @Test
  void listenDeliversWithinMillisecondsOfTheCommitWhileThePollIsTenSeconds() throws Exception {
    String table = newTable();
    OutboxRelay relay = relay(table, b -> b.pollInterval(Duration.ofSeconds(10)));
    Receiver.await("LISTEN in place", WAIT, relay::listening);
    Thread.sleep(500); // the wake-up LISTEN itself gives is spent
    long[] committed = new long[1];
    for (int i = 0; i < 3; i++) {
      int before = receiver.requests().size();
      transaction(4, null, true, c -> Outbox.post(c, table, receiver.uri("/fast"), "x"));
      committed[0] = System.nanoTime();
      Receiver.await("delivered", Duration.ofSeconds(5), () -> receiver.requests().size() > before);
      long millis = (receiver.requests().get(before).arrivedNanos() - committed[0]) / 1_000_000;
      System.out.println("[latency] PostgreSQL LISTEN: commit to delivery " + millis + " ms");
      assertThat(millis).as("commit to delivery, ms (poll every 10 s)").isLessThan(2000);
      Thread.sleep(300);
    }
  }

  /** The rights docs/reference/outbox.md gives the relay, and no more: it claims, delivers, retries and parks. */
  @Test
  void aRelayWithOnlyTheDocumentedRightsDeliversAndParks() throws Exception {
    String table = newTable();
    String role = "relay_" + table;
    try (Connection c = connect(); Statement s = c.createStatement()) {
      s.execute("CREATE ROLE " + role + " LOGIN");
      s.execute("GRANT SELECT, UPDATE (state, attempts, next_attempt_at, delivered_at, last_error, claimed_by,"
          + " claimed_until) ON " + table + " TO " + role);
    }
    receiver.answer(r -> r.path().equals("/down") ? new Receiver.Answer(503, Map.of()) : Receiver.Answer.OK);
    String[] ids = new String[2];
    transaction(6, null, true, c -> {
      ids[0] = Outbox.post(c, table, receiver.uri("/up"), "a");
      ids[1] = Outbox.post(c, table, receiver.uri("/down"), "b");
    });
    String url = server.jdbcUrl().replace("user=" + server.user(), "user=" + role);
    relay(() -> DriverManager.getConnection(url), table, b -> b.maxAttempts(2).backoff(Duration.ofMillis(100)));

    Receiver.await("one delivered, one parked", WAIT, () -> Map.of(ids[0], OutboxSchema.DELIVERED, ids[1],
        OutboxSchema.PARKED).equals(states(table)));
    assertThat(row(table, ids[1]).lastError()).contains("HTTP 503");
  }

  /**
   * A relay whose user lacks one of the documented rights does not start, and says which right and what to grant:
   * without it, the relay would fail only at the first event that needs the missing column (a retry, say).
   */
  @Test
  void aRelayLackingADocumentedRightDoesNotStartAndNamesTheGrant() throws Exception {
    String table = newTable();
    String role = "relay_short_" + table;
    try (Connection c = connect(); Statement s = c.createStatement()) {
      s.execute("CREATE ROLE " + role + " LOGIN");
      s.execute("GRANT SELECT, UPDATE (state, attempts, next_attempt_at, delivered_at, claimed_by, claimed_until) ON "
          + table + " TO " + role);
    }
    String url = server.jdbcUrl().replace("user=" + server.user(), "user=" + role);
    OutboxRelay.Builder b = OutboxRelay.builder(() -> DriverManager.getConnection(url), table);
    assertThatThrownBy(() -> b.build().start()).isInstanceOf(SQLException.class)
        .hasMessage("the relay's database user " + role + " lacks UPDATE (last_error) on " + table + "; it needs: GRANT"
            + " SELECT, UPDATE (state, attempts, next_attempt_at, delivered_at, last_error, claimed_by, claimed_until)"
            + " ON " + table + " TO " + role)
        .extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("42501");
    try (Connection c = connect(); Statement s = c.createStatement()) {
      s.execute("REVOKE ALL ON " + table + " FROM " + role);
    }
    assertThatThrownBy(() -> b.build().start()).hasMessageStartingWith("the relay's database user " + role
        + " lacks SELECT, UPDATE (state), UPDATE (attempts), ");
  }

  /** A database restart breaks the relay's connections; it reconnects, LISTENs again and delivers what follows. */
  @Test
  void theRelayCarriesOnAfterTheDatabaseRestarts() throws Exception {
    String table = newTable();
    OutboxRelay relay = relay(table, b -> b.pollInterval(Duration.ofSeconds(10)));
    Receiver.await("LISTEN in place", WAIT, relay::listening);
    server.stop();
    Receiver.await("LISTEN gone", WAIT, () -> !relay.listening());
    Thread.sleep(1000);
    server.restart();
    transaction(2, null, true, c -> Outbox.post(c, table, receiver.uri("/after-restart"), "x"));
    Receiver.await("delivered after the restart", WAIT, () -> receiver.applied().size() == 1);
    Receiver.await("LISTEN again", WAIT, relay::listening);
    assertThat(logs.toString(java.nio.charset.StandardCharsets.UTF_8)).contains("reconnected to the database");
  }

  /** An outbox in a schema of its own: the trigger notifies on the table's bare name, which the relay LISTENs on. */
  @Test
  void anOutboxInASchemaIsListenedToByItsBareName() throws Exception {
    String schema = "shop_" + ProcessHandle.current().pid();
    try (Connection c = connect(); Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
    }
    String table = newTable(schema + ".events");
    OutboxRelay relay = relay(table, b -> b.pollInterval(Duration.ofSeconds(10)));
    Receiver.await("LISTEN in place", WAIT, relay::listening);
    assertThat(logs.toString(java.nio.charset.StandardCharsets.UTF_8)).contains("LISTEN events,");
    Thread.sleep(500);
    transaction(1, null, true, c -> Outbox.post(c, table, receiver.uri("/schema"), "x"));
    long committed = System.nanoTime();
    Receiver.await("delivered", Duration.ofSeconds(5), () -> receiver.requests().size() == 1);
    assertThat((receiver.requests().get(0).arrivedNanos() - committed) / 1_000_000).isLessThan(2000);
  }
}
