package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.OutboxSchema;
import dev.fencing.protocol.SqlStates;
import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/** The outbox contract on a real PostgreSQL 15, plus NOTIFY at commit and the rights of non-superuser roles. */
class PostgresOutboxIT extends OutboxContractIT {

  private static PostgresServer server;

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
    Connection c = DriverManager.getConnection(server.jdbcUrl());
    exec(c, "SET lock_timeout = '30s'"); // a test that waits wrongly fails instead of hanging
    return c;
  }

  @Override
  void session(Connection c, String lock, Long token, String grant) throws SQLException {
    set(c, "fencing.lock", lock == null ? "" : lock);
    set(c, "fencing.token", token == null ? "" : token.toString());
    set(c, "fencing.grant", grant == null ? "" : grant);
  }

  private static void set(Connection c, String name, String value) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT set_config(?, ?, false)")) {
      ps.setString(1, name);
      ps.setString(2, value);
      ps.execute();
    }
  }

  @Override
  SqlDialect dialect() {
    return SqlDialect.POSTGRESQL;
  }

  /** The relay LISTENs on the outbox's name: a notification arrives when the writer commits, none before. */
  @Test
  void aCommitNotifiesTheOutboxChannelAndNothingComesBefore() throws Exception {
    Names n = setUp();
    try (Connection listener = connect(); Connection writer = connect()) {
      exec(listener, "LISTEN " + n.outbox());
      PGConnection pg = listener.unwrap(PGConnection.class);
      writer.setAutoCommit(false);
      session(writer, n.lock(), 3L, null);
      insertEvent(writer, n.outbox(), "https://hooks.example/1");
      insertEvent(writer, n.outbox(), "https://hooks.example/2");
      assertThat(notifications(pg, 500)).isEmpty();
      writer.commit();
      PGNotification[] got = notifications(pg, 5000);
      assertThat(got).hasSize(1);
      assertThat(got[0].getName()).isEqualTo(n.outbox());
      // A rolled-back transaction notifies nobody.
      insertEvent(writer, n.outbox(), "https://hooks.example/3");
      writer.rollback();
      assertThat(notifications(pg, 500)).isEmpty();
    }
  }

  private static PGNotification[] notifications(PGConnection pg, int millis) throws SQLException {
    PGNotification[] got = pg.getNotifications(millis);
    return got == null ? new PGNotification[0] : got;
  }

  /**
   * The rights the reference documents, and no more: a writer role with INSERT on the outbox (and its own business
   * table) writes events; a relay role with SELECT, UPDATE of the delivery columns and DELETE claims, marks and
   * removes them, and can neither insert events nor change an event column.
   */
  @Test
  void aWriterAndARelayRoleNeedOnlyTheDocumentedRights() throws Exception {
    Names n = setUp();
    String writer = "outbox_writer_" + n.outbox().substring("outbox_".length());
    String relay = "outbox_relay_" + n.outbox().substring("outbox_".length());
    try (Connection c = connect()) {
      exec(c, "CREATE ROLE " + writer + " LOGIN");
      exec(c, "CREATE ROLE " + relay + " LOGIN");
      exec(c, "GRANT SELECT, INSERT ON " + n.business() + " TO " + writer);
      exec(c, "GRANT INSERT ON " + n.outbox() + " TO " + writer);
      exec(c, "GRANT SELECT, UPDATE (" + String.join(", ", OutboxInstaller.DELIVERY_COLUMNS) + "), DELETE ON "
          + n.outbox() + " TO " + relay);
    }
    try (Connection w = DriverManager.getConnection(server.jdbcUrl().replace("user=postgres", "user=" + writer))) {
      w.setAutoCommit(false);
      session(w, n.lock(), 11L, "grant-w");
      exec(w, "INSERT INTO " + n.business() + " (id, amount) VALUES (1, 10)");
      insertEvent(w, n.outbox(), "https://hooks.example/w");
      insertKeyed(w, n.outbox(), "orders", "k", "keyed");
      w.commit();
      // The writer cannot move the ordering counters or the fence by hand.
      assertThatThrownBy(() -> exec(w, "UPDATE " + n.outbox() + "_key SET last_seq = 0"))
          .hasMessageContaining("permission denied");
      w.rollback();
      assertThatThrownBy(() -> exec(w, "UPDATE fencing_fence SET token = 1")).hasMessageContaining("permission");
      w.rollback();
    }
    try (Connection r = DriverManager.getConnection(server.jdbcUrl().replace("user=postgres", "user=" + relay))) {
      r.setAutoCommit(false);
      // A claim as a relay makes it: lock the due rows, skip those another relay holds.
      int claimed = r.createStatement().executeUpdate("UPDATE " + n.outbox() + " SET " + OutboxSchema.CLAIMED_BY
          + " = 'r1', " + OutboxSchema.CLAIMED_UNTIL + " = now() + interval '30 seconds' WHERE "
          + OutboxSchema.EVENT_ID + " IN (SELECT " + OutboxSchema.EVENT_ID + " FROM " + n.outbox() + " WHERE "
          + OutboxSchema.STATE + " = 'pending' AND " + OutboxSchema.NEXT_ATTEMPT_AT + " <= now() ORDER BY "
          + OutboxSchema.ORDER_KEY + ", " + OutboxSchema.KEY_SEQ + " FOR UPDATE SKIP LOCKED)");
      assertThat(claimed).isEqualTo(2);
      exec(r, "UPDATE " + n.outbox() + " SET " + OutboxSchema.STATE + " = 'delivered', " + OutboxSchema.DELIVERED_AT
          + " = now(), " + OutboxSchema.ATTEMPTS + " = " + OutboxSchema.ATTEMPTS + " + 1");
      r.commit();
      assertThatThrownBy(() -> exec(r, "UPDATE " + n.outbox() + " SET " + OutboxSchema.PAYLOAD + " = 'x'"))
          .hasMessageContaining("permission denied");
      r.rollback();
      session(r, n.lock(), 11L, null);
      assertThatThrownBy(() -> insertEvent(r, n.outbox(), "https://hooks.example/r"))
          .hasMessageContaining("permission denied");
      r.rollback();
      exec(r, "DELETE FROM " + n.outbox() + " WHERE " + OutboxSchema.STATE + " = 'delivered'");
      r.commit();
    }
    try (Connection c = connect()) {
      assertThat(count(c, n.outbox())).isZero();
      assertThat(count(c, n.business())).isEqualTo(1);
    }
  }

  /** The statement-level fence runs before the row trigger: a stale multi-row insert fails before any row. */
  @Test
  void aStaleInsertSelectFailsAsAWhole() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      session(c, n.lock(), 50L, null);
      insertEvent(c, n.outbox(), "https://hooks.example/1");
      session(c, n.lock(), 49L, null);
      assertThatThrownBy(() -> exec(c, "INSERT INTO " + n.outbox() + " (" + OutboxSchema.CHANNEL + ", "
          + OutboxSchema.TARGET + ", " + OutboxSchema.PAYLOAD + ") SELECT 'http', 'https://hooks.example/' || g, "
          + "'{}' FROM generate_series(1, 3) g")).satisfies(e -> FenceContractIT.assertState(e,
          SqlStates.STALE_TOKEN));
      assertThat(count(c, n.outbox())).isEqualTo(1);
    }
  }
}
