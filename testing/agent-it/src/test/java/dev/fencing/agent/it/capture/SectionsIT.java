package dev.fencing.agent.it.capture;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.it.sections.Jobs;
import dev.fencing.it.sections.SectionsApp;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Declared sections, two locks in one JVM, plain JDBC on real PostgreSQL with the SQL fence on two tables (table_a
 * by lock-a, table_b by lock-b) and two JVMs of one application: both write freely outside the sections the whole
 * time; each section runs on the holder of its lock only (void ones are skipped elsewhere, counted); the holder paused
 * past the TTL loses lock-a to the other JVM, which takes it with a higher token; the paused holder's section write
 * after it resumes is refused, its other writes still pass.
 */
class SectionsIT {
  private static final String JOBS = Jobs.class.getName();

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /** One JVM of the application, with its agent's status port. */
  static final class App implements AutoCloseable {
    final AgentJvm jvm;
    final int port;
    private final AppStdin stdin;

    App(Path javaHome, String name, String agentArgs, String url) {
      port = Ports.freePort();
      jvm = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
          .classpath(AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar"))
          .mainClass(SectionsApp.class.getName()).args(url).agentArgs(agentArgs + ",http.port=" + port).start();
      stdin = AppStdin.jdbc(jvm);
      jvm.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    }

    String run(String command) throws IOException {
      return stdin.run(command);
    }

    String metrics() {
      return Http.get("http://127.0.0.1:" + port + "/metrics");
    }

    /** Waits until /status shows {@code lock} in {@code state}; returns the lock's token. */
    long await(String lock, String state, Duration timeout) {
      String body = Http.awaitStatus(port, "\"lock\":\"" + lock + "\",\"scope\":\"sections\",\"state\":\"" + state + "\"",
          timeout);
      Matcher m = Pattern.compile("\"lock\":\"" + Pattern.quote(lock) + "\",\"scope\":\"sections\",\"state\":\"" + state
          + "\",\"token\":(\\d+)").matcher(body);
      assertThat(m.find()).as(body).isTrue();
      return Long.parseLong(m.group(1));
    }

    @Override
    public void close() {
      jvm.close();
    }
  }

  static long count(String url, String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void eachSectionRunsOnItsLocksHolderOnlyAndAPausedHoldersSectionWriteIsRefused(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE table_a (note VARCHAR(64))");
        s.execute("CREATE TABLE table_b (note VARCHAR(64))");
        s.execute("CREATE TABLE free (note VARCHAR(64))"); // no fence: ordinary work
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("table_a"), "lock-a", false, false));
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("table_b"), "lock-b", false, false));
      }
      String args = "sections=" + JOBS + "#jobA@lock-a," + JOBS + "#jobB@lock-b," + JOBS + "#reportA@lock-a,"
          + JOBS + "#handOffA@lock-a," + JOBS + "#lateA@lock-a," + "com.acme.NeverLoaded#run@lock-b"
          + ",lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints=" + etcd.endpoints();
      try (App a = new App(javaHome, "sections-a", args, url)) {
        long tokenA = a.await("lock-a", "HOLDING", Duration.ofSeconds(15));
        a.await("lock-b", "HOLDING", Duration.ofSeconds(15));
        try (App b = new App(javaHome, "sections-b", args, url)) {
          b.await("lock-a", "STANDBY", Duration.ofSeconds(15));
          b.await("lock-b", "STANDBY", Duration.ofSeconds(15));

          // Outside every section both JVMs write freely, the standby too.
          assertThat(a.run("OUT INSERT INTO free VALUES ('a1')")).isEqualTo("OK 1");
          assertThat(b.run("OUT INSERT INTO free VALUES ('b1')")).isEqualTo("OK 1");
          // The sections run on the holder only; elsewhere void ones are skipped and counted.
          assertThat(a.run("JOBA a-job")).isEqualTo("OK ran");
          assertThat(a.run("JOBB a-job")).isEqualTo("OK ran");
          assertThat(b.run("JOBA b-job")).isEqualTo("OK skipped");
          assertThat(b.run("JOBB b-job")).isEqualTo("OK skipped");
          // A section with a result runs on the standby, its writes refused as on standby, before the database.
          assertThat(b.run("REPORTA b-report")).startsWith("ERR FN003").contains("lock 'lock-a'", "has not acquired the lease");
          assertThat(a.run("REPORTA a-report")).isEqualTo("OK 1");
          // Work handed to an executor inside a section carries the section's token (untagged, the fence says FN002).
          assertThat(a.run("HANDOFFA a-handoff")).isEqualTo("OK ran");
          assertThat(count(url, "SELECT count(*) FROM table_a WHERE note = 'a-handoff'")).isEqualTo(1);
          assertThat(count(url, "SELECT count(*) FROM table_a WHERE note LIKE 'b-%'")).isZero();
          assertThat(b.metrics())
              .contains("fencing_section_skipped_total{lock=\"lock-a\"} 1.0", "fencing_section_skipped_total{lock=\"lock-b\"} 1.0")
              .containsPattern("fencing_side_effects_total\\{channel=\"jdbc\",fenced=\"false\",lock=\"none\",outcome=\"passed\"} [1-9]")
              .containsPattern("fencing_side_effects_total\\{channel=\"jdbc\",fenced=\"(true|false)\",lock=\"lock-a\",outcome=\"blocked\"} 1\\.0")
              .contains("fencing_lease_held{lock=\"lock-a\"} 0.0");
          assertThat(a.metrics()).contains("fencing_lease_held{lock=\"lock-a\"} 1.0", "fencing_lease_held{lock=\"lock-b\"} 1.0")
              .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"true\",lock=\"lock-a\",outcome=\"tagged\"} 3.0");
          assertThat(Http.get("http://127.0.0.1:" + a.port + "/status"))
              .contains("{\"section\":\"" + JOBS + "#jobA\",\"status\":\"loaded\"}")
              .contains("{\"section\":\"com.acme.NeverLoaded#run\",\"status\":\"class not loaded\"}");

          // A enters a section, then stalls in it past its TTL; B takes lock-a over with a higher token and writes.
          assertThat(a.run("LATEA a-late 6000")).isEqualTo("OK started");
          Thread.sleep(200);
          a.jvm.suspend();
          long tokenB = b.await("lock-a", "HOLDING", Duration.ofSeconds(3 + 4));
          assertThat(tokenB).isGreaterThan(tokenA);
          assertThat(b.run("JOBA b-job2")).isEqualTo("OK ran");
          a.jvm.resume();
          // A's section write after it resumed is refused; its ordinary writes go on.
          a.jvm.awaitOutput("LATE ", Duration.ofSeconds(20));
          assertThat(a.jvm.output()).containsPattern("LATE ERR (FN001|FN003)");
          assertThat(count(url, "SELECT count(*) FROM table_a WHERE note = 'a-late'")).isZero();
          assertThat(a.run("OUT INSERT INTO free VALUES ('a2')")).isEqualTo("OK 1");
          assertThat(a.run("JOBA a-job3")).isEqualTo("OK skipped");
          // After the loss a fenced table still gets the last token, which the fence refuses (FN001).
          assertThat(a.run("REPORTA a-report2")).containsPattern("^ERR FN00[13]");
          assertThat(a.metrics()).contains("fencing_rejections_total{channel=\"jdbc\",lock=\"lock-a\",reason=\"stale_token\"}");
          assertThat(b.run("REPORTA b-report2")).isEqualTo("OK 1");
          assertThat(b.run("OUT INSERT INTO free VALUES ('b2')")).isEqualTo("OK 1");
          assertThat(count(url, "SELECT count(*) FROM free")).isEqualTo(4);
          assertThat(count(url, "SELECT count(*) FROM table_a WHERE note LIKE 'a-%'")).isEqualTo(3); // job, report, handoff
          assertThat(count(url, "SELECT token FROM fencing_fence WHERE lock_name = 'lock-a'")).isEqualTo(tokenB);
        }
      }
    }
  }
}
