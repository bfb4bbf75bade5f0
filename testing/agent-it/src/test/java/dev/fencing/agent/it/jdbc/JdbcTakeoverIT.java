package dev.fencing.agent.it.jdbc;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.jdbc.JdbcIT.JdbcJvm;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.MariaDbServer;
import dev.fencing.testing.PostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The seed's scenario against real PostgreSQL and MariaDB with the SQL fence installed: holder A writes, is paused
 * past its TTL, B takes over and writes, A wakes with writes queued; the database rejects every one of them, no
 * stale row lands, and A counts the rejections.
 */
public class JdbcTakeoverIT {
  private static final String[] LIBS = {"fencing.it.postgresql.jar", "fencing.it.mariadb.jar"};

  public interface Database extends AutoCloseable {
    String url();

    @Override
    void close();
  }

  /**
   * (database, driver jar, JDK): each driver version once, each database on every JDK: the current drivers on the
   * newest Java, the other versions on this build's (how a driver's session carries the token is the driver's and
   * the agent's logic, the same on every Java; that the hook is woven shows on both).
   */
  public static List<Arguments> cases() {
    String pg = System.getProperty("fencing.it.postgresql.jar");
    String maria = System.getProperty("fencing.it.mariadb.jar");
    List<Arguments> out = new ArrayList<>();
    Path newest = AgentProcesses.newestJava().get(0);
    out.add(Arguments.of("postgresql", pg, newest));
    out.add(Arguments.of("mariadb", maria, newest));
    Path java17 = AgentProcesses.javaHomes().get(0);
    for (String kind : List.of("postgresql", "mariadb")) { // the other versions of testing/library-versions
      String current = Path.of(System.getProperty("fencing.it." + kind + ".jar")).getFileName().toString();
      for (String version : AgentProcesses.libraryVersions(kind)) {
        String jar = driverJar(kind, version);
        if (!Path.of(jar).getFileName().toString().equals(current)) {
          out.add(Arguments.of(kind, jar, java17));
        }
      }
    }
    return out;
  }

  /** The one jar testing/library-versions resolved for the {@code kind} driver {@code version}. */
  private static String driverJar(String kind, String version) {
    Path dir = AgentProcesses.libraryJars(kind, version);
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(dir)) {
      List<Path> jars = files.filter(f -> f.toString().endsWith(".jar")).toList();
      if (jars.size() != 1) {
        throw new IllegalStateException("expected one driver jar in " + dir + ", found " + jars
            + ": build testing/library-versions first (mvn install)");
      }
      return jars.get(0).toString();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(dir + " is missing: build testing/library-versions first (mvn install)", e);
    }
  }

  public static Database start(String kind) {
    if (kind.equals("postgresql")) {
      PostgresServer pg = PostgresServer.start();
      return new Database() {
        public String url() {
          return pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
        }

        public void close() {
          pg.close();
        }
      };
    }
    MariaDbServer db = MariaDbServer.start();
    return new Database() {
      public String url() {
        return db.jdbcUrl();
      }

      public void close() {
        db.close();
      }
    };
  }

  public static String query(String url, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  @ParameterizedTest(name = "{0} with {1} on {2}")
  @MethodSource("cases")
  void staleWritesOfAResumedHolderAreRejectedByTheDatabase(String kind, String driverJar, Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); Database db = start(kind)) {
      try (Connection c = DriverManager.getConnection(db.url()); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
        s.execute("CREATE TABLE audit (note VARCHAR(64))"); // not protected
        s.execute("INSERT INTO account VALUES (1, 0), (2, 0)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("account"), "ledger", false, false));
      }
      String args = "lock=ledger,lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints=" + etcd.endpoints();
      String cp = AgentProcesses.appClasspath() + java.io.File.pathSeparator + driverJar;
      // Connector/J 4 insists on TLS unless told otherwise; the test server has none.
      String appUrl = driverJar.contains("mariadb-java-client-4.") ? db.url() + "&sslMode=disable" : db.url();
      try (JdbcJvm a = new JdbcJvm(javaHome, kind + "-a", args, appUrl, cp)) {
        long tokenA = Long.parseLong(Http.jsonField(Http.awaitStatus(a.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token"));
        assertThat(a.run("SQL UPDATE account SET balance = 100 WHERE id = 1")).isEqualTo("OK 1");
        try (JdbcJvm b = new JdbcJvm(javaHome, kind + "-b", args, appUrl, cp)) {
          Http.awaitStatus(b.port, "\"state\":\"STANDBY\"", Duration.ofSeconds(15));

          a.jvm.suspend(); // a long GC pause
          String took = Http.awaitStatus(b.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(3 + 2));
          long tokenB = Long.parseLong(Http.jsonField(took, "token"));
          assertThat(tokenB).isGreaterThan(tokenA);
          assertThat(b.run("SQL UPDATE account SET balance = 200 WHERE id = 1")).isEqualTo("OK 1");

          // A wakes up with writes in flight: every one is sent with its old token and rejected by the fence.
          a.jvm.resume();
          assertThat(a.run("SQL UPDATE account SET balance = 666 WHERE id = 1")).startsWith("ERR FN001");
          assertThat(a.run("PREP UPDATE account SET balance = 666 WHERE id = 2")).startsWith("ERR FN001");
          assertThat(a.run("SQL INSERT INTO account VALUES (3, 666)")).startsWith("ERR FN001");
          assertThat(a.run("SQL DELETE FROM account WHERE id = 2")).startsWith("ERR FN001");
          // A Statement batch has no text the hook can judge (the statements were added one by one): blocked.
          assertThat(a.run("BATCH UPDATE account SET balance = 666 WHERE id = 1;INSERT INTO account VALUES (4, 666)"))
              .startsWith("ERR FN003");
          // A table no fence protects gets nothing after the deadline: the agent blocks the write (FN003).
          assertThat(a.run("TXN INSERT INTO audit VALUES ('stale');UPDATE account SET balance = 666 WHERE id = 1"))
              .startsWith("ERR FN003");
          assertThat(a.run("TXN UPDATE account SET balance = 666 WHERE id = 1;INSERT INTO audit VALUES ('stale')"))
              .startsWith("ERR FN001");

          // The database holds B's value and nothing of A's; the whole transaction rolled back.
          assertThat(query(db.url(), "SELECT balance FROM account WHERE id = 1")).isEqualTo("200");
          assertThat(query(db.url(), "SELECT count(*) FROM account")).isEqualTo("2");
          assertThat(query(db.url(), "SELECT count(*) FROM audit")).isEqualTo("0");
          assertThat(query(db.url(), "SELECT token FROM fencing_fence WHERE lock_name = 'ledger'")).isEqualTo(Long.toString(tokenB));
          assertThat(Http.get("http://127.0.0.1:" + a.port + "/metrics"))
              .contains("fencing_rejections_total{channel=\"jdbc\",lock=\"ledger\",reason=\"stale_token\"} 5.0")
              .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"true\",lock=\"ledger\",outcome=\"blocked\"} 0.0")
              .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"ledger\",outcome=\"blocked\"} 2.0");
          // B goes on writing.
          assertThat(b.run("SQL UPDATE account SET balance = 300 WHERE id = 1")).isEqualTo("OK 1");
        }
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"postgresql", "mariadb"})
  void sameHolderWritesDoNotSerialiseOnTheFence(String kind) throws Exception {
    Path javaHome = Path.of(System.getProperty("java.home"));
    try (EtcdCluster etcd = EtcdCluster.single(); Database db = start(kind)) {
      try (Connection c = DriverManager.getConnection(db.url()); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("account"), "ledger", false, false));
      }
      try (JdbcJvm a = new JdbcJvm(javaHome, kind + "-load", "lock=ledger,etcd.endpoints=" + etcd.endpoints(), db.url(),
          JdbcIT.classpath(LIBS))) {
        Http.awaitStatus(a.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
        a.run("LOAD 1 500"); // warm up the driver, the hook and the fence
        long one = Long.parseLong(a.run("LOAD 1 3000").substring(4));
        long four = Long.parseLong(a.run("LOAD 4 3000").substring(4)); // different rows: only the fence is shared
        double ratio = four / (double) one;
        System.out.printf("[throughput] %s through the agent, fenced table: 1 connection %d tx/s, 4 connections %d tx/s (%.2fx)%n",
            kind, one, four, ratio);
        assertThat(ratio).as("4 connections vs 1 (%d vs %d tx/s)", four, one).isGreaterThanOrEqualTo(1.5);
        assertThat(query(db.url(), "SELECT count(*) FROM account WHERE balance <> 0")).isEqualTo("0");
      }
    }
  }
}
