package dev.fencing.agent.it.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.PostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** `java -jar fencing-agent.jar sql ...` against a real PostgreSQL: print, install, re-install, uninstall. */
class SqlCliIT {
  private static String sql(String... args) {
    String[] all = new String[args.length + 1];
    all[0] = "sql";
    System.arraycopy(args, 0, all, 1, args.length);
    try (AgentJvm cli = AgentJvm.builder().name("sql-cli").noAgent()
        .executableJar(Path.of(System.getProperty("fencing.agent.jar"))).args(all).start()) {
      int exit = cli.awaitExit(Duration.ofSeconds(60));
      return exit + " " + cli.output();
    }
  }

  @Test
  void installerRoundTripThroughTheAgentJar() throws Exception {
    try (PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE orders (id INT PRIMARY KEY, amount INT)");
      }
      String driver = System.getProperty("fencing.it.postgresql.jar");
      assertThat(sql("print", "--dialect", "postgresql", "--table", "orders", "--lock", "shop"))
          .startsWith("0 ").contains("CREATE TABLE IF NOT EXISTS fencing_fence");
      String[] install = {"install", "--jdbc-url", url, "--driver-jar", driver, "--table", "orders", "--lock", "shop"};
      assertThat(sql(install)).startsWith("0 ");
      assertThat(sql(install)).as("re-install is idempotent").startsWith("0 ");
      try (Connection c = DriverManager.getConnection(url)) {
        assertThat(SqlFenceInstaller.isFenced(c)).isTrue();
        try (Statement s = c.createStatement()) {
          s.executeUpdate("INSERT INTO orders VALUES (1, 1)");
          throw new AssertionError("a write without a token passed the fence");
        } catch (java.sql.SQLException e) {
          assertThat(e.getSQLState()).isEqualTo("FN002");
        }
      }
      assertThat(sql("install", "--jdbc-url", url, "--driver-jar", driver, "--table", "nosuch", "--lock", "shop"))
          .startsWith("1 ").containsIgnoringCase("nosuch");
      assertThat(sql("uninstall", "--jdbc-url", url, "--driver-jar", driver, "--table", "orders")).startsWith("0 ");
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        assertThat(s.executeUpdate("INSERT INTO orders VALUES (1, 1)")).as("unfenced again").isEqualTo(1);
      }
      assertThat(sql("bogus")).startsWith("2 ");
    }
  }
}
