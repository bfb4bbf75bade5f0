package dev.fencing.agent.it.jdbc;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.sql.FenceReset;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fence as a DBA installs it and an application runs against it. The DBA runs {@code sql install} as the
 * database's superuser through the agent jar; the application, with the agent attached, connects as its own role
 * with DML rights on its table only. Its writes land (the fence runs as its owner), the agent detects the database as
 * fenced while connected as that role (the fence and registry tables are readable by PUBLIC), the role cannot move the
 * fence by hand, and a stale token is still rejected.
 */
class SqlAppRoleIT {
  private static final String APP = "ledger_app";

  private static String cli(String... args) {
    try (AgentJvm cli = AgentJvm.builder().name("sql-cli").noAgent()
        .executableJar(Path.of(System.getProperty("fencing.agent.jar"))).args(args).start()) {
      int exit = cli.awaitExit(Duration.ofSeconds(60));
      return exit + " " + cli.output();
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgresql", "mariadb"})
  void anApplicationRoleWithDmlRightsOnlyWritesThroughTheFenceTheDbaInstalled(String kind) throws Exception {
    boolean pg = kind.equals("postgresql");
    String driver = System.getProperty(pg ? "fencing.it.postgresql.jar" : "fencing.it.mariadb.jar");
    try (EtcdCluster etcd = EtcdCluster.single(); JdbcTakeoverIT.Database db = JdbcTakeoverIT.start(kind)) {
      String admin = db.url();
      try (Connection c = DriverManager.getConnection(admin); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
        s.execute("INSERT INTO account VALUES (1, 0), (2, 0)");
        if (pg) {
          s.execute("CREATE ROLE " + APP + " LOGIN");
          s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON account TO " + APP);
        } else {
          s.execute("CREATE USER '" + APP + "'@'%'");
          s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON fencing.account TO '" + APP + "'@'%'");
        }
      }
      String installed = cli("sql", "install", "--jdbc-url", admin, "--driver-jar", driver, "--table", "account",
          "--lock", "ledger");
      assertThat(installed).as(installed).startsWith("0 ").contains("installed: SQL fence on");

      String appUrl = admin.replace("user=" + (pg ? "postgres" : "root"), "user=" + APP);
      assertThat(appUrl).contains("user=" + APP).doesNotContain("user=postgres").doesNotContain("user=root");
      try (JdbcIT.JdbcJvm app = new JdbcIT.JdbcJvm(AgentProcesses.javaHomes().get(0), kind + "-app-role",
          "lock=ledger,lease.ttl=10s,etcd.endpoints=" + etcd.endpoints(), appUrl, JdbcIT.classpath(
              pg ? "fencing.it.postgresql.jar" : "fencing.it.mariadb.jar"))) {
        long token = Long.parseLong(Http.jsonField(Http.awaitStatus(app.port, "\"state\":\"HOLDING\"",
            Duration.ofSeconds(15)), "token"));
        assertThat(app.run("SQL UPDATE account SET balance = 100 WHERE id = 1")).isEqualTo("OK 1");
        assertThat(app.run("PREP UPDATE account SET balance = 50 WHERE id = 2")).isEqualTo("OK 1");
        assertThat(app.run("TXN INSERT INTO account VALUES (3, 7);DELETE FROM account WHERE id = 3")).startsWith("OK");
        assertThat(JdbcTakeoverIT.query(admin, "SELECT token FROM fencing_fence WHERE lock_name = 'ledger'"))
            .isEqualTo(Long.toString(token));
        assertThat(JdbcTakeoverIT.query(admin, "SELECT sum(balance) FROM account")).isEqualTo("150");

        // The role cannot move the fence by hand (the agent tags the statement; the database refuses it).
        assertThat(app.run("SQL UPDATE fencing_fence SET token = 0")).startsWith("ERR 42");
        assertThat(app.run("SQL DELETE FROM fencing_fence")).startsWith("ERR 42");
        assertThat(app.run("QUERY SELECT count(*) FROM fencing_fenced_table WHERE table_name = 'account'"))
            .isEqualTo("ROW 1");
        assertThat(JdbcTakeoverIT.query(admin, "SELECT token FROM fencing_fence WHERE lock_name = 'ledger'"))
            .isEqualTo(Long.toString(token));

        // The agent saw the database as fenced while connected as the application role.
        assertThat(Http.get("http://127.0.0.1:" + app.port + "/metrics"))
            .containsPattern("fencing_side_effects_total\\{channel=\"jdbc\",fenced=\"true\",lock=\"ledger\","
                + "outcome=\"tagged\"\\} [1-9]");

        // A successor's token (set here as an operator would): the application's writes are stale now.
        try (Connection c = DriverManager.getConnection(admin)) {
          FenceReset.set(c, null, "ledger", token + 1000, false);
        }
        assertThat(app.run("SQL UPDATE account SET balance = 666 WHERE id = 1")).startsWith("ERR FN001");
        assertThat(JdbcTakeoverIT.query(admin, "SELECT balance FROM account WHERE id = 1")).isEqualTo("100");
      }
      // What the installer told the DBA.
      assertThat(installed).contains("privileges: GRANT SELECT ON").contains("TO PUBLIC")
          .contains("runs as:").contains("writers need only their DML rights");
      if (pg) {
        assertThat(installed).contains("privileges: REVOKE ALL ON").contains("SECURITY DEFINER");
      }
    }
  }
}
