package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.SqlStates;
import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
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
  void grant(Connection c, String grant) throws SQLException {
    set(c, "fencing.grant", grant == null ? "" : grant);
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
      assertThat(setting(a, "fencing.verified")).isEqualTo(n.lock() + ":5:");

      session(b, n.lock(), 6L);
      update(b, n.table(), 1, 12);
      assertThatThrownBy(() -> update(a, n.table(), 1, 99)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));

      // Forged: a token above the fence still advances it (exclusive lock), one below is still stale.
      set(a, "fencing.verified", n.lock() + ":7:");
      session(a, n.lock(), 7L);
      update(a, n.table(), 1, 13);
      assertThat(fenceToken(a, n.lock())).isEqualTo(7L);
      set(a, "fencing.verified", n.lock() + ":3:");
      session(a, n.lock(), 3L);
      assertThatThrownBy(() -> update(a, n.table(), 1, 98)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      // Remembered for another lock: the session's own lock is still checked.
      set(a, "fencing.verified", n.lock() + ":7:");
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

  /**
   * The DBA installs the fence as a superuser; the application connects as its own role with DML
   * rights on its table only. Its writes pass the fence (the functions run as their owner), stale and missing tokens
   * are still rejected, it cannot move the fence by hand, and it can find the fenced tables through the registry.
   */
  @Test
  void anApplicationRoleWithDmlRightsOnlyWritesThroughTheFence() throws Exception {
    Names n = names();
    String role = "app_" + n.table();
    try (Connection c = connect()) {
      createTable(c, n.table());
      install(c, n, false, false);
      exec(c, "CREATE ROLE " + role + " LOGIN");
      exec(c, "GRANT SELECT, INSERT, UPDATE, DELETE ON " + n.table() + " TO " + role);
      // What an earlier release told DBAs to grant: reported by the installer, not revoked (a JDBC fence store may
      // write the table as that role); revoked here by hand.
      exec(c, "GRANT INSERT, UPDATE ON fencing_fence TO " + role);
      SqlFenceInstaller.Outcome again = new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(n.table()),
          n.lock(), false, false));
      assertThat(again.privileges())
          .contains("privileges: REVOKE ALL ON \"public\".fencing_fence, \"public\".fencing_fenced_table FROM PUBLIC",
              "privileges: GRANT SELECT ON \"public\".fencing_fence, \"public\".fencing_fenced_table TO PUBLIC",
              "privileges: REVOKE ALL ON FUNCTION \"public\".fencing_check() FROM PUBLIC")
          .anySatisfy(l -> assertThat(l).startsWith("runs as: \"public\".fencing_check() is SECURITY DEFINER, owned by "
              + "postgres"))
          .anySatisfy(l -> assertThat(l).startsWith("note: role " + role + " still has INSERT, UPDATE on"));
      exec(c, "REVOKE INSERT, UPDATE ON fencing_fence FROM " + role);
      assertThat(new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(n.table()), n.lock(), false, false))
          .privileges()).noneSatisfy(l -> assertThat(l).startsWith("note:"));
    }
    String url = server.jdbcUrl().replace("user=postgres", "user=" + role);
    try (Connection app = DriverManager.getConnection(url); Connection other = DriverManager.getConnection(url)) {
      session(app, n.lock(), 5L);
      insert(app, n.table(), 1, 10);
      update(app, n.table(), 1, 11);
      update(app, n.table(), 1, 12);
      delete(app, n.table(), 1);
      insert(app, n.table(), 1, 13);
      session(other, n.lock(), 6L);
      update(other, n.table(), 1, 14);
      assertThatThrownBy(() -> update(app, n.table(), 1, 666)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      try (Connection bare = DriverManager.getConnection(url)) {
        assertThatThrownBy(() -> update(bare, n.table(), 1, 666))
            .satisfies(e -> assertState(e, SqlStates.MISSING_TOKEN));
      }
      assertThat(amounts(app, n.table())).containsExactly(14);
      assertThat(fenceToken(app, n.lock())).as("writers may read the fence").isEqualTo(6L);

      // Writers cannot move the fence by hand, nor shadow it with a temporary table.
      for (String sql : List.of("UPDATE fencing_fence SET token = 0", "DELETE FROM fencing_fence",
          "INSERT INTO fencing_fence (lock_name, token) VALUES ('x', 1)", "TRUNCATE fencing_fence",
          "UPDATE fencing_fenced_table SET mode = 'row'", "DELETE FROM fencing_fenced_table")) {
        assertThatThrownBy(() -> exec(other, sql)).as(sql).satisfies(e -> assertState(e, "42501"));
      }
      exec(other, "CREATE TEMP TABLE fencing_fence (lock_name varchar(128) PRIMARY KEY, token bigint NOT NULL,"
          + " updated_at timestamp, grant_id varchar(64))");
      exec(other, "SET search_path = pg_temp, public");
      session(other, n.lock(), 1L);
      exec(other, "SELECT set_config('fencing.verified', '', false)");
      assertThatThrownBy(() -> exec(other, "UPDATE public." + n.table() + " SET amount = 666"))
          .satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));

      // Nor attach the fence function (it runs as its owner) to a table of their own to move another lock's fence.
      exec(other, "CREATE TEMP TABLE mine (i int)");
      assertThatThrownBy(() -> exec(other, "CREATE TRIGGER mine BEFORE INSERT ON mine FOR EACH STATEMENT EXECUTE"
          + " FUNCTION public.fencing_check('other-lock', 'strict')")).satisfies(e -> assertState(e, "42501"));

      // Fence detection as the application role: both queries the agent's JDBC hook runs.
      List<String> schemas = column(app, "SELECT table_schema FROM information_schema.tables"
          + " WHERE lower(table_name) = 'fencing_fenced_table'");
      assertThat(schemas).contains("public");
      assertThat(column(app, "SELECT table_schema || '.' || table_name FROM public.fencing_fenced_table"))
          .contains("public." + n.table());
    } finally {
      try (Connection c = connect()) {
        exec(c, "DROP TABLE " + n.table());
        exec(c, "DROP OWNED BY " + role);
        exec(c, "DROP ROLE " + role);
      }
    }
  }

  /**
   * {@code sql print} of an unqualified table cannot name the schema: the script makes the check SECURITY DEFINER
   * with the search path pinned to the schema it was created in, and registers the table under that schema.
   */
  @Test
  void thePrintedScriptOfAnUnqualifiedTablePinsTheSchemaItRunsIn() throws Exception {
    Names n = names();
    String schema = "printed_" + n.table();
    String role = "app_" + n.table();
    try (Connection c = connect()) {
      exec(c, "CREATE SCHEMA " + schema);
      exec(c, "SET search_path = " + schema);
      createTable(c, n.table());
      SqlFence fence = new SqlFence(TableName.parse(n.table()), n.lock(), false, false);
      for (SqlFenceDdl.Statement st : new SqlFenceDdl(SqlDialect.POSTGRESQL).install(fence, false)) {
        exec(c, st.sql());
      }
      exec(c, "CREATE ROLE " + role + " LOGIN");
      exec(c, "GRANT USAGE ON SCHEMA " + schema + " TO " + role);
      exec(c, "GRANT SELECT, INSERT, UPDATE, DELETE ON " + n.table() + " TO " + role);
      exec(c, "RESET search_path");
      assertThat(column(c, "SELECT p.prosecdef || ' ' || array_to_string(p.proconfig, ';') FROM pg_proc p"
          + " JOIN pg_namespace s ON s.oid = p.pronamespace WHERE s.nspname = '" + schema + "'"
          + " AND p.proname = 'fencing_check'")).containsExactly("true search_path=" + schema + ", pg_temp");
      assertThat(column(c, "SELECT table_schema || '.' || table_name FROM " + schema + ".fencing_fenced_table"))
          .containsExactly(schema + "." + n.table());
    }
    String url = server.jdbcUrl().replace("user=postgres", "user=" + role);
    try (Connection app = DriverManager.getConnection(url)) {
      session(app, n.lock(), 4L);
      insert(app, schema + "." + n.table(), 1, 1);
      session(app, n.lock(), 3L);
      assertThatThrownBy(() -> insert(app, schema + "." + n.table(), 2, 2))
          .satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
    } finally {
      try (Connection c = connect()) {
        exec(c, "DROP SCHEMA " + schema + " CASCADE");
        exec(c, "DROP OWNED BY " + role);
        exec(c, "DROP ROLE " + role);
      }
    }
  }

  static List<String> column(Connection c, String sql) throws SQLException {
    List<String> out = new java.util.ArrayList<>();
    try (var st = c.createStatement(); var rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }
}
