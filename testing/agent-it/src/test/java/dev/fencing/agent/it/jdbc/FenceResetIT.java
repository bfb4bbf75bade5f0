package dev.fencing.agent.it.jdbc;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.PostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Token poisoning and its repair, with real components: the JDBC app holds the lock through the agent (real etcd) and
 * writes to a table under the SQL fence (real PostgreSQL); a session with a forged huge token poisons the fence, so
 * the legitimate holder's writes fail with FN001; {@code java -jar fencing-agent.jar fence reset} refuses to lower
 * without {@code --lower} and to go above the coordinator's token, then sets the fence back to the holder's token
 * with one audit line, and the holder's writes are accepted again.
 */
class FenceResetIT {
  private static String fence(String... args) {
    String[] all = new String[args.length + 1];
    all[0] = "fence";
    System.arraycopy(args, 0, all, 1, args.length);
    try (AgentJvm cli = AgentJvm.builder().name("fence-cli").noAgent()
        .executableJar(Path.of(System.getProperty("fencing.agent.jar"))).args(all).start()) {
      int exit = cli.awaitExit(Duration.ofSeconds(60));
      return exit + " " + cli.output();
    }
  }

  private static long fenceToken(String url) throws Exception {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT token FROM fencing_fence WHERE lock_name = 'ledger'")) {
      assertThat(rs.next()).isTrue();
      return rs.getLong(1);
    }
  }

  @Test
  void resetRestoresAPoisonedFenceToTheHoldersTokenWithAnAuditLine() throws Exception {
    String driver = System.getProperty("fencing.it.postgresql.jar");
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT)");
      }
      try (AgentJvm cli = AgentJvm.builder().name("sql-cli").noAgent()
          .executableJar(Path.of(System.getProperty("fencing.agent.jar")))
          .args("sql", "install", "--jdbc-url", url, "--driver-jar", driver, "--table", "account", "--lock", "ledger")
          .start()) {
        assertThat(cli.awaitExit(Duration.ofSeconds(60))).as(cli.output()).isZero();
      }
      try (JdbcIT.JdbcJvm app = new JdbcIT.JdbcJvm(AgentProcesses.javaHomes().get(0), "reset-holder",
          "lock=ledger,lease.ttl=10s,etcd.endpoints=" + etcd.endpoints(), url, JdbcIT.classpath(
              "fencing.it.postgresql.jar"))) {
        long token = Long.parseLong(Http.jsonField(
            Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token"));
        assertThat(app.run("SQL INSERT INTO account VALUES (1, 0)")).isEqualTo("OK 1");
        assertThat(fenceToken(url)).isEqualTo(token);

        // Poisoning: a session with a forged huge token (no agent) moves the fence beyond every real holder.
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
          s.execute("SELECT set_config('fencing.lock', 'ledger', false), "
              + "set_config('fencing.token', '9223372036854775807', false)");
          s.executeUpdate("INSERT INTO account VALUES (666, 0)");
        }
        assertThat(fenceToken(url)).isEqualTo(Long.MAX_VALUE);
        assertThat(app.run("SQL UPDATE account SET balance = 1 WHERE id = 1")).startsWith("ERR FN001");

        String[] base = {"reset", "lock=ledger", "etcd.endpoints=" + etcd.endpoints(), "--jdbc-url", url,
            "--driver-jar", driver};
        assertThat(fence(base)).as("lowering needs --lower").startsWith("1 ")
            .contains("fence reset refused: the fence token 9223372036854775807 of lock 'ledger'")
            .contains("re-run with --lower").doesNotContain("fencing-audit");
        assertThat(fenceToken(url)).isEqualTo(Long.MAX_VALUE);
        assertThat(fence(concat(base, "--lower", "--token", Long.toString(token + 1000)))).startsWith("1 ")
            .contains("is above the coordinator's token " + token);
        assertThat(fenceToken(url)).isEqualTo(Long.MAX_VALUE);

        String done = fence(concat(base, "--lower"));
        assertThat(done).startsWith("0 ");
        // fence() puts the exit code in front of the output: "0 fencing-audit: ..."
        String audit = done.lines().filter(l -> l.contains("fencing-audit: ")).findFirst().orElseThrow(
            () -> new AssertionError("no audit line in: " + done));
        assertThat(audit).contains("fence reset at=").contains(" by=").contains(" lock=ledger ")
            .contains(" old=9223372036854775807 new=" + token + " outcome=lowered")
            .contains("coordinator=(holder ").contains(" token " + token + ")")
            .contains("target=" + pg.jdbcUrl().split("\\?")[0] + " fencing_fence").doesNotContain("user=");
        assertThat(done.lines().filter(l -> l.contains("fencing-audit"))).hasSize(1);
        assertThat(fenceToken(url)).isEqualTo(token);

        // The legitimate holder writes again.
        assertThat(app.run("SQL UPDATE account SET balance = 1 WHERE id = 1")).isEqualTo("OK 1");
        assertThat(fence(base)).as("nothing to do").startsWith("0 ").contains("outcome=unchanged");
      }

      // Nobody holds the lock any more: the target is etcd's current revision, above every past token.
      String idle = fence("reset", "lock=ledger", "etcd.endpoints=" + etcd.endpoints(), "--jdbc-url", url,
          "--driver-jar", driver);
      assertThat(idle).startsWith("0 ").contains("coordinator=(not held, etcd revision ").contains("outcome=raised");
    }
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
