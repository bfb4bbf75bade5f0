package dev.fencing.agent.it.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.it.api.ApiApp;
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
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The optional application API (fencing-api) with the real agent jar, real etcd and PostgreSQL with the SQL fence on
 * the jobs' table: an application whose jobs are annotated {@code @Fenced("orders")} and read
 * {@code Fencing.current()}. Without the agent the API is empty and the jobs just run. With it (and no configuration
 * naming a section: {@code fencing.sections.annotated=true}), inside a job the API answers the lock, token and grant
 * that /status shows, that the insert is tagged with and that the fence stores; outside every job it is empty; the
 * job is skipped on the replica that does not hold "orders"; the holder paused past its TTL inside a job loses the
 * lock to the other replica, and the stale job's write after it resumes is refused.
 */
class FencingApiIT {
  private static EtcdCluster etcd;
  private static PostgresServer pg;
  private static String url;

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @BeforeAll
  static void start() throws Exception {
    etcd = EtcdCluster.single();
    pg = PostgresServer.start();
    url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE plain (note VARCHAR(64))");
    }
  }

  @AfterAll
  static void stop() {
    if (pg != null) {
      pg.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  /** One JVM of the application; with an agent, its status port. */
  static final class App implements AutoCloseable {
    final AgentJvm jvm;
    final int port;
    private final AppStdin stdin;

    App(Path javaHome, String name, String agentArgs) {
      port = Ports.freePort();
      AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome)
          .name(name + "-java" + AgentProcesses.javaVersion(javaHome))
          .classpath(AgentProcesses.appClasspath() + File.pathSeparator + AgentProcesses.libraries("fencing-api-")
              + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar"))
          .mainClass(ApiApp.class.getName()).args(url);
      jvm = (agentArgs == null ? b.noAgent() : b.agentArgs(agentArgs + ",http.port=" + port + ",holder.id=" + name))
          .start();
      stdin = AppStdin.jdbc(jvm);
      jvm.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    }

    String run(String command) throws IOException {
      return stdin.run(command);
    }

    /** Waits until /status shows the lock "orders" (taken for the @Fenced methods) in {@code state}: token, grant. */
    String[] await(String state, Duration timeout) {
      String want = "\"lock\":\"orders\",\"library\":\"fenced\",\"path\":\"orders\",\"state\":\"" + state + "\"";
      String body = Http.awaitStatus(port, want, timeout);
      Matcher m = Pattern.compile(Pattern.quote(want) + ",\"token\":(\\d+),\"leaseId\":\"?([0-9a-f]+|null)")
          .matcher(body);
      assertThat(m.find()).as(body).isTrue();
      return new String[] {m.group(1), m.group(2)};
    }

    @Override
    public void close() {
      jvm.close();
    }
  }

  static String query(String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      StringBuilder sb = new StringBuilder();
      while (rs.next()) {
        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
          sb.append(i > 1 ? "/" : "").append(rs.getString(i));
        }
      }
      return sb.toString();
    }
  }

  @Test
  void withoutTheAgentTheApiIsEmptyAndFencedMethodsJustRun() throws Exception {
    try (App app = new App(javaHomes().get(0), "api-plain", null)) {
      assertThat(app.run("CURRENT")).isEqualTo("OK empty");
      assertThat(app.run("JOB plain p1")).isEqualTo("OK ran api=empty session=none/none");
      assertThat(app.run("REPORT plain p2")).isEqualTo("OK api=empty session=none/none");
      assertThat(query("SELECT count(*) FROM plain WHERE note LIKE 'p_'")).isEqualTo("2");
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void insideAFencedMethodTheApiAnswersTheAgentsLockTokenAndGrantAndAStaleJobIsRefused(Path javaHome)
      throws Exception {
    String table = "orders_" + AgentProcesses.javaVersion(javaHome);
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + table + " (note VARCHAR(64))");
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(table), "orders", false, false));
    }
    String args = "sections.annotated=true,lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints=" + etcd.endpoints();
    try (App a = new App(javaHome, "api-a", args)) {
      String[] held = a.await("HOLDING", Duration.ofSeconds(15));
      String ctxA = "orders/" + held[0] + "/" + held[1];
      // Outside every @Fenced method (and no JVM-wide lock) the API is empty, and writes pass untagged.
      assertThat(a.run("CURRENT")).isEqualTo("OK empty");
      assertThat(a.run("REPORT plain a0")).as("a section with a result").startsWith("OK api=" + ctxA + " ");
      // Inside: the lock, token and grant of /status, which the insert carries and the fence stores.
      assertThat(a.run("JOB " + table + " a1")).isEqualTo("OK ran api=" + ctxA + " session=" + held[0] + "/" + held[1]);
      assertThat(query("SELECT lock_name, token, grant_id FROM fencing_fence WHERE lock_name = 'orders'"))
          .isEqualTo(ctxA);
      try (App b = new App(javaHome, "api-b", args)) {
        b.await("STANDBY", Duration.ofSeconds(15));
        assertThat(b.run("JOB " + table + " b1")).as("a void job runs on the holder only").isEqualTo("OK skipped");
        assertThat(b.run("CURRENT")).isEqualTo("OK empty");

        // A starts a job, then stalls in it past its TTL; B takes "orders" over with a higher token and writes.
        assertThat(a.run("LATE " + table + " a-late 5000")).isEqualTo("OK started");
        Thread.sleep(200);
        a.jvm.suspend();
        String[] taken = b.await("HOLDING", Duration.ofSeconds(3 + 5));
        assertThat(Long.parseLong(taken[0])).isGreaterThan(Long.parseLong(held[0]));
        String ctxB = "orders/" + taken[0] + "/" + taken[1];
        assertThat(b.run("JOB " + table + " b2"))
            .isEqualTo("OK ran api=" + ctxB + " session=" + taken[0] + "/" + taken[1]);
        a.jvm.resume();
        // The stale job still reads A's last token (what a resource must refuse), and its insert is refused.
        String late = a.jvm.awaitOutput("LATE before", Duration.ofSeconds(20));
        assertThat(late).containsPattern("LATE before " + Pattern.quote(ctxA) + " after (" + Pattern.quote(ctxA)
            + "|empty) ERR (FN001|FN003)");
        assertThat(query("SELECT count(*) FROM " + table + " WHERE note = 'a-late'")).isEqualTo("0");
        assertThat(a.run("JOB " + table + " a2")).isEqualTo("OK skipped");
        assertThat(a.run("CURRENT")).isEqualTo("OK empty");
        assertThat(query("SELECT lock_name, token, grant_id FROM fencing_fence WHERE lock_name = 'orders'"))
            .isEqualTo(ctxB);
      }
    }
  }
}
