package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The fence contract on a real PostgreSQL 15, plus what only PostgreSQL has: TRUNCATE triggers and schemas. */
class PostgresFenceIT extends FenceContractIT {

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
    return DriverManager.getConnection(server.jdbcUrl());
  }

  @Override
  void session(Connection c, String lock, Object token) throws SQLException {
    set(c, "fencing.lock", lock);
    set(c, "fencing.token", token);
  }

  private static void set(Connection c, String name, Object value) throws SQLException {
    if (value == null) {
      return;
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT set_config(?, ?, false)")) {
      ps.setString(1, name);
      ps.setString(2, value.toString());
      ps.execute();
    }
  }

  @Override
  SqlDialect dialect() {
    return SqlDialect.POSTGRESQL;
  }

  @Override
  int triggerCount(Connection c, String table) throws SQLException {
    return count(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = ?::regclass AND NOT tgisinternal", table);
  }

  /**
   * 4 same-token connections against 1 (figures printed as [throughput]). Random rows, so that the writers never
   * wait for each other's row locks; a deadlock between two rows is impossible with one row per statement.
   */
  @Override
  int fenceObjects(Connection c, String schema) throws SQLException {
    return count(c, "SELECT (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        + " WHERE n.nspname = s.name AND p.proname LIKE 'fencing%')"
        + " + (SELECT count(*) FROM pg_tables WHERE schemaname = s.name AND tablename LIKE 'fencing%')"
        + " FROM (SELECT ?::text AS name) s", schema);
  }

  @Test
  void sameTokenWritersDoNotSerialise() throws Exception {
    Names n = names();
    String unfenced = "unfenced_" + n.table();
    String control = "control_" + n.table();
    try (Connection c = connect()) {
      Throughput.prepare(c, n.table(), unfenced, control);
      install(c, n, false, false);
      exec(c, "CREATE FUNCTION serialise_" + n.table() + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
          + "PERFORM pg_advisory_xact_lock(42); RETURN NULL; END $$");
      exec(c, "CREATE TRIGGER serialise BEFORE UPDATE ON " + control + " FOR EACH STATEMENT EXECUTE FUNCTION "
          + "serialise_" + n.table() + "()");
    }
    Throughput.assertScales("PostgreSQL", this::connect, c -> session(c, n.lock(), 42L), n.table(), unfenced,
        control);
  }

  /**
   * The table-mode check remembers in the session ({@code fencing.verified}) which token it found equal to the fence,
   * to skip a read; that memory only chooses the lock mode. A remembered token that another session has since
   * overtaken, a value forged by the client, and a fence lowered by an operator are all decided by the fence row.
   */
  @Test
  void theSessionsRememberedTokenNeverDecides() throws Exception {
    Names n = names();
    try (Connection a = connect(); Connection b = connect()) {
      createTable(a, n.table());
      install(a, n, false, false);
      session(a, n.lock(), 5L);
      insert(a, n.table(), 1, 10);
      update(a, n.table(), 1, 11); // the second write goes the remembered way
      assertThat(setting(a, "fencing.verified")).isEqualTo(n.lock() + ":5");

      session(b, n.lock(), 6L);
      update(b, n.table(), 1, 12);
      assertThatThrownBy(() -> update(a, n.table(), 1, 99)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));

      // Forged: a token above the fence still advances it (exclusive lock), one below is still stale.
      set(a, "fencing.verified", n.lock() + ":7");
      session(a, n.lock(), 7L);
      update(a, n.table(), 1, 13);
      assertThat(fenceToken(a, n.lock())).isEqualTo(7L);
      set(a, "fencing.verified", n.lock() + ":3");
      session(a, n.lock(), 3L);
      assertThatThrownBy(() -> update(a, n.table(), 1, 98)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      // Remembered for another lock: the session's own lock is still checked.
      set(a, "fencing.verified", n.lock() + ":7");
      session(a, "other_lock", 7L);
      assertThatThrownBy(() -> update(a, n.table(), 1, 97)).satisfies(e -> assertState(e, SqlStates.MISSING_TOKEN));

      // An operator lowers the fence: the remembering session's next write takes it up again, once.
      session(a, n.lock(), 7L);
      update(a, n.table(), 1, 14);
      exec(b, "UPDATE fencing_fence SET token = 2 WHERE lock_name = '" + n.lock() + "'");
      update(a, n.table(), 1, 15);
      assertThat(fenceToken(a, n.lock())).isEqualTo(7L);
      assertThat(amounts(a, n.table())).containsExactly(15);
    }
  }

  private static String setting(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT current_setting(?, true)")) {
      ps.setString(1, name);
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  @Test
  void truncateIsFencedToo() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      createTable(c, n.table());
      install(c, n, false, false);
      session(c, n.lock(), 9L);
      insert(c, n.table(), 1, 1);
      session(c, n.lock(), 8L);
      assertThatThrownBy(() -> exec(c, "TRUNCATE " + n.table()))
          .satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      assertThat(amounts(c, n.table())).containsExactly(1);
    }
  }

  @Test
  void fenceObjectsLiveInTheTablesSchema() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      exec(c, "CREATE SCHEMA IF NOT EXISTS billing");
      createTable(c, "billing." + n.table());
      SqlFence fence = new SqlFence(TableName.parse("billing." + n.table()), n.lock(), false, false);
      new SqlFenceInstaller(c).install(fence);
      session(c, n.lock(), 3L);
      insert(c, "billing." + n.table(), 1, 1);
      try (PreparedStatement ps = c.prepareStatement("SELECT token FROM billing.fencing_fence WHERE lock_name = ?")) {
        ps.setString(1, n.lock());
        try (var rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getLong(1)).isEqualTo(3L);
        }
      }
      new SqlFenceInstaller(c).uninstall(fence.table());
      assertThat(count(c, "SELECT count(*) FROM pg_tables WHERE schemaname = ?", "billing")).isEqualTo(1);
    }
  }

  @Test
  void missingPrivilegesAreNamedAndNothingIsInstalled() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      createTable(c, n.table());
      exec(c, "DROP ROLE IF EXISTS fencing_app");
      exec(c, "CREATE ROLE fencing_app LOGIN");
      exec(c, "GRANT SELECT, INSERT, UPDATE, DELETE ON " + n.table() + " TO fencing_app");
    }
    String url = server.jdbcUrl().replace("user=postgres", "user=fencing_app");
    try (Connection app = DriverManager.getConnection(url)) {
      assertThatThrownBy(() -> new SqlFenceInstaller(app).install(new SqlFence(TableName.parse(n.table()), n.lock(),
          false, false))).hasMessageContaining("missing privileges").hasMessageContaining("rolled back");
    }
    try (Connection c = connect()) {
      assertThat(triggerCount(c, n.table())).isZero();
      exec(c, "DROP TABLE " + n.table());
      exec(c, "DROP ROLE fencing_app");
    }
  }
}
