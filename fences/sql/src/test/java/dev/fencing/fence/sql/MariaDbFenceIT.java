package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.SqlStates;
import dev.fencing.testing.MariaDbServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The fence contract on a real MariaDB (InnoDB, REPEATABLE READ by default). */
class MariaDbFenceIT extends FenceContractIT {

  private static MariaDbServer server;

  @BeforeAll
  static void startServer() {
    server = MariaDbServer.start();
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
    try (PreparedStatement ps = c.prepareStatement("SET @fencing_lock = ?, @fencing_token = ?")) {
      ps.setString(1, lock);
      if (token instanceof Long l) {
        ps.setLong(2, l);
      } else {
        ps.setString(2, token == null ? null : token.toString());
      }
      ps.execute();
    }
  }

  @Override
  void grant(Connection c, String grant) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SET @fencing_grant = ?")) {
      ps.setString(1, grant);
      ps.execute();
    }
  }

  /** As fencing_check_v1's release created them. */
  @Override
  void createOldFenceTables(Connection c, String schema) throws SQLException {
    exec(c, "CREATE TABLE " + schema + ".fencing_fence (lock_name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin"
        + " NOT NULL PRIMARY KEY, token BIGINT NOT NULL, updated_at DATETIME(6) NULL) ENGINE=InnoDB");
    exec(c, "CREATE TABLE " + schema + ".fencing_fence_stripe (lock_name VARCHAR(128) CHARACTER SET ascii COLLATE"
        + " ascii_bin NOT NULL, stripe INT NOT NULL, token BIGINT NOT NULL, PRIMARY KEY (lock_name, stripe))"
        + " ENGINE=InnoDB");
  }

  @Override
  SqlDialect dialect() {
    return SqlDialect.MYSQL;
  }

  /**
   * An upgrade: a table whose triggers call an earlier release's fencing_check_v2 gets triggers calling
   * fencing_check_v3 on re-install, and the grant columns it lacks; a table not re-installed keeps its triggers, so v2
   * stays until the schema's last fence is uninstalled, which drops every version.
   */
  @Test
  void reinstallReplacesTriggersThatCallAnEarlierCheckVersion() throws Exception {
    Names n = names();
    String schema = "up_" + n.table();
    try (Connection c = connect()) {
      exec(c, "CREATE DATABASE " + schema);
      try {
        createTable(c, schema + ".t");
        createTable(c, schema + ".u");
        // What the earlier release left: tables with grant_id but no grant_token, fencing_check_v2 and triggers
        // calling it (this body only stands in for v2's).
        createOldFenceTables(c, schema);
        exec(c, "ALTER TABLE " + schema + ".fencing_fence ADD COLUMN grant_id varchar(64)");
        exec(c, "ALTER TABLE " + schema + ".fencing_fence_stripe ADD COLUMN grant_id varchar(64)");
        exec(c, "CREATE PROCEDURE " + schema + ".fencing_check_v2(IN p_lock VARCHAR(128), IN p_permissive BOOLEAN,"
            + " IN p_table VARCHAR(200)) BEGIN END");
        for (String t : List.of("t", "u")) {
          exec(c, "CREATE TRIGGER " + schema + ".fencing_" + t + "_bi_0badc0de BEFORE INSERT ON " + schema + "." + t
              + " FOR EACH ROW CALL " + schema + ".fencing_check_v2('" + n.lock() + "', FALSE, '" + t + "')");
        }
        SqlFenceInstaller installer = new SqlFenceInstaller(c);
        assertThat(installer.install(new SqlFence(TableName.parse(schema + ".t"), n.lock(), false, false)).summary())
            .contains("fencing_fence.grant_token", "fencing_fence_stripe.grant_token");
        assertThat(column(c, "SELECT ACTION_STATEMENT FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = '"
            + schema + "' AND EVENT_OBJECT_TABLE = 't'")).hasSize(3)
            .allSatisfy(body -> assertThat(body).contains("fencing_check_v3("));
        assertThat(column(c, "SELECT ACTION_STATEMENT FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = '"
            + schema + "' AND EVENT_OBJECT_TABLE = 'u'")).singleElement()
            .satisfies(body -> assertThat(body).contains("fencing_check_v2("));
        assertThat(routines(c, schema)).contains("fencing_check_v2", "fencing_check_v3");

        session(c, n.lock(), 5L);
        grant(c, "aa");
        insert(c, schema + ".t", 1, 1);
        grant(c, "bb");
        assertThatThrownBy(() -> insert(c, schema + ".t", 2, 2)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));

        installer.uninstall(TableName.parse(schema + ".t"));
        assertThat(routines(c, schema)).as("u's trigger still calls v2").contains("fencing_check_v2");
        installer.uninstall(TableName.parse(schema + ".u"));
        assertThat(routines(c, schema)).isEmpty();
      } finally {
        exec(c, "DROP DATABASE " + schema);
      }
    }
  }

  private static List<String> routines(Connection c, String schema) throws SQLException {
    return column(c, "SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = '" + schema + "'");
  }

  private static List<String> column(Connection c, String sql) throws SQLException {
    return PostgresFenceIT.column(c, sql);
  }

  @Override
  int triggerCount(Connection c, String table) throws SQLException {
    return count(c, "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()"
        + " AND EVENT_OBJECT_TABLE = ?", table);
  }

  @Override
  int fenceObjects(Connection c, String schema) throws SQLException {
    return count(c, "SELECT (SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = s.name"
        + " AND ROUTINE_NAME LIKE 'fencing%') + (SELECT COUNT(*) FROM information_schema.TABLES"
        + " WHERE TABLE_SCHEMA = s.name AND TABLE_NAME LIKE 'fencing%') FROM (SELECT ? AS name) s", schema);
  }

  /** 4 same-token connections against 1 (figures printed as [throughput]). */
  @Test
  void sameTokenWritersDoNotSerialise() throws Exception {
    Names n = names();
    String unfenced = "unfenced_" + n.table();
    String control = "control_" + n.table();
    try (Connection c = connect()) {
      Throughput.prepare(c, n.table(), unfenced, control);
      install(c, n, false, false);
      // The naive fence: every write locks one row FOR UPDATE.
      exec(c, "CREATE TABLE lock_" + n.table() + " (id INT PRIMARY KEY)");
      exec(c, "INSERT INTO lock_" + n.table() + " VALUES (1)");
      exec(c, "CREATE TRIGGER serialise_" + n.table() + " BEFORE UPDATE ON " + control + " FOR EACH ROW BEGIN "
          + "DECLARE v INT; SELECT id INTO v FROM lock_" + n.table() + " WHERE id = 1 FOR UPDATE; END");
    }
    try {
      Throughput.assertScales("MariaDB", this::connect, c -> session(c, n.lock(), 42L), n.table(), unfenced,
          control);
    } catch (Exception e) {
      // A deadlock or lock wait is explained only by InnoDB's status (latest detected deadlock, lock waits).
      try (Connection c = connect(); var st = c.createStatement();
          var rs = st.executeQuery("SHOW ENGINE INNODB STATUS")) {
        rs.next();
        System.out.println("[innodb status] " + rs.getString(3));
      }
      throw e;
    }
  }

  @Test
  void tokenAsStringOrNumberIsTheSame() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      createTable(c, n.table());
      install(c, n, false, false);
      exec(c, "SET @fencing_lock = '" + n.lock() + "', @fencing_token = 11");
      insert(c, n.table(), 1, 1);
      exec(c, "SET @fencing_token = '11'");
      update(c, n.table(), 1, 2);
      exec(c, "SET @fencing_token = 'abc'");
      assertThatThrownBy(() -> update(c, n.table(), 1, 3)).satisfies(e -> assertState(e, SqlStates.MISSING_TOKEN));
      assertThat(fenceToken(c, n.lock())).isEqualTo(11L);
    }
  }

  @Test
  void missingPrivilegesAreNamedAndNothingIsLeftBehind() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      exec(c, "CREATE DATABASE IF NOT EXISTS app2");
      createTable(c, "app2." + n.table());
      exec(c, "CREATE USER IF NOT EXISTS 'fencing_app'@'%'");
      // Enough to create the fence table and procedures, not the triggers: the undo must take them away again.
      exec(c, "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, CREATE ROUTINE, ALTER ROUTINE ON app2.* TO "
          + "'fencing_app'@'%'");
    }
    String url = server.jdbcUrl().replace("/fencing?user=root", "/app2?user=fencing_app");
    try (Connection app = DriverManager.getConnection(url)) {
      assertThatThrownBy(() -> new SqlFenceInstaller(app).install(new SqlFence(TableName.parse(n.table()), n.lock(),
          false, false))).hasMessageContaining("missing privileges").hasMessageContaining("dropped again");
    }
    try (Connection c = connect()) {
      assertThat(count(c, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", "app2"))
          .as("only the protected table is left").isEqualTo(1);
      assertThat(count(c, "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?", "app2"))
          .isZero();
      exec(c, "DROP DATABASE app2");
      exec(c, "DROP USER 'fencing_app'@'%'");
    }
  }

  /**
   * Root installs the fence; the application's own user has DML rights on its table only. Its
   * writes pass the fence (triggers and procedures run as their definer), stale and missing tokens are rejected, it
   * cannot move the fence by hand, and it can find the fenced tables through the registry (GRANT SELECT TO PUBLIC).
   */
  @Test
  void anApplicationUserWithDmlRightsOnlyWritesThroughTheFence() throws Exception {
    Names n = names();
    String user = "app_" + n.table();
    try (Connection c = connect()) {
      createTable(c, n.table());
      assertThat(new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(n.table()), n.lock(), false, false))
          .privileges())
          .contains("privileges: GRANT SELECT ON `fencing`.fencing_fence TO PUBLIC",
              "privileges: GRANT SELECT ON `fencing`.fencing_fenced_table TO PUBLIC")
          .anySatisfy(l -> assertThat(l).startsWith("runs as: the triggers and procedures run as their definer root@"));
      exec(c, "CREATE USER '" + user + "'@'%'");
      exec(c, "GRANT SELECT, INSERT, UPDATE, DELETE ON fencing." + n.table() + " TO '" + user + "'@'%'");
    }
    String url = server.jdbcUrl().replace("user=root", "user=" + user);
    try (Connection app = DriverManager.getConnection(url); Connection other = DriverManager.getConnection(url)) {
      session(app, n.lock(), 5L);
      insert(app, n.table(), 1, 10);
      update(app, n.table(), 1, 11);
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

      for (String sql : List.of("UPDATE fencing_fence SET token = 0", "DELETE FROM fencing_fence",
          "INSERT INTO fencing_fence (lock_name, token) VALUES ('x', 1)", "UPDATE fencing_fence_stripe SET token = 0",
          "UPDATE fencing_fenced_table SET mode = 'row'", "CALL fencing_check_v3('" + n.lock() + "', TRUE, 'x')")) {
        assertThatThrownBy(() -> exec(other, sql)).as(sql).isInstanceOf(SQLException.class)
            .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).as(e.getMessage()).isIn(1142, 1370));
      }

      // Fence detection as the application user: both queries the agent's JDBC hook runs.
      assertThat(PostgresFenceIT.column(app, "SELECT table_schema FROM information_schema.tables"
          + " WHERE lower(table_name) = 'fencing_fenced_table'")).contains("fencing");
      assertThat(PostgresFenceIT.column(app, "SELECT CONCAT(table_schema, '.', table_name) FROM"
          + " fencing.fencing_fenced_table")).contains("fencing." + n.table());
      assertThat(fenceToken(app, n.lock())).as("writers may read the fence").isEqualTo(6L);
    } finally {
      try (Connection c = connect()) {
        exec(c, "DROP USER '" + user + "'@'%'");
      }
    }
  }
}
