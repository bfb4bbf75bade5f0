package dev.fencing.agent.it.capture;

import static dev.fencing.agent.it.Checks.awaitCount;
import static dev.fencing.agent.it.Checks.count;
import static dev.fencing.agent.it.Checks.strings;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.it.quartz.QuartzApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Quartz users turn fencing on with one setting: two nodes of a clustered Quartz (JDBC job store on PostgreSQL, the
 * tables of Quartz's own tables_postgres.sql, check-in every second) with the agent ({@code quartz.jobs=billing.settle},
 * real etcd) and the SQL fence on {@code quartz_row} for lock {@code billing.settle}; the job ({@code requestsRecovery})
 * writes one row per step ({@link QuartzApp}, no fencing code). The node running it is frozen (SIGSTOP) in the middle
 * of a run, past the cluster's check-in and the lease TTL; the other node recovers the job, takes the agent's lock
 * {@code billing.settle} with a higher token, and writes; the frozen one resumes: its writes after the successor's
 * first are refused, the successor's land.
 */
class QuartzIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void aRecoveredJobsFrozenOriginalIsRefusedAfterItsSuccessorsFirstWrite(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      String url = url(pg);
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        createTables(s);
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("quartz_row"), "billing.settle", false, false));
      }
      int portA = Ports.freePort();
      int portB = Ports.freePort();
      String agent = "quartz.jobs=billing.settle,quartz.wait=20s,lease.ttl=3s,lease.safety-margin=500ms,"
          + "etcd.endpoints=" + etcd.endpoints();
      try (AgentJvm a = node(javaHome, "node-a", url, agent + ",http.port=" + portA, true);
          AgentJvm b = node(javaHome, "node-b", url, agent + ",http.port=" + portB, false);
          Connection c = DriverManager.getConnection(url)) {
        awaitCount(c, "SELECT count(*) FROM quartz_row", 3, Duration.ofSeconds(30));
        assertThat(count(c, "SELECT count(*) FROM quartz_row WHERE token_seen IS NULL"))
            .as("every row of the job carries the token of the agent's lock 'billing.settle'").isZero();

        String holder = strings(c, "SELECT node FROM quartz_row ORDER BY id LIMIT 1").get(0);
        AgentJvm frozen = holder.equals("node-a") ? a : b;
        String successor = frozen == a ? "node-b" : "node-a";
        int frozenPort = frozen == a ? portA : portB;
        frozen.suspend();
        long frozenAt = System.nanoTime();
        long lastOfFrozen = count(c, "SELECT max(id) FROM quartz_row WHERE node = '" + holder + "'");
        long tokenOfFrozen = Long.parseLong(
            strings(c, "SELECT token_seen FROM quartz_row WHERE id = " + lastOfFrozen).get(0));

        // The successor's cluster check-in finds the frozen node late, recovers its job, takes the agent's lock (the
        // frozen node's lease has lapsed by then) and writes.
        awaitCount(c, "SELECT count(*) FROM quartz_row WHERE node = '" + successor + "'", 1, Duration.ofSeconds(30));
        long firstOfSuccessor = count(c, "SELECT min(id) FROM quartz_row WHERE node = '" + successor + "'");
        long tokenOfSuccessor = Long.parseLong(
            strings(c, "SELECT token_seen FROM quartz_row WHERE id = " + firstOfSuccessor).get(0));
        System.out.printf("java %s: %s frozen at row %d (token %d); %s's first row %d (token %d) %d ms later%n",
            AgentProcesses.javaVersion(javaHome), holder, lastOfFrozen, tokenOfFrozen, successor, firstOfSuccessor,
            tokenOfSuccessor, (System.nanoTime() - frozenAt) / 1_000_000);
        assertThat(strings(c, "SELECT recovering FROM quartz_row WHERE id = " + firstOfSuccessor))
            .as("the successor runs the job as Quartz's recovery of the frozen node's run").containsExactly("t");
        assertThat(tokenOfSuccessor).as("the successor's token").isGreaterThan(tokenOfFrozen);

        frozen.resume();
        // The frozen run goes on where it stopped: its next write is refused (by the agent: the lease expired on its
        // monotonic clock, FN003; or by the fence: FN001), so the job fails.
        String failed = frozen.awaitOutput("JOB FAILED", Duration.ofSeconds(20));
        System.out.println("the resumed run: " + failed.lines().filter(l -> l.contains("JOB FAILED")).findFirst()
            .orElse(""));
        assertThat(failed).containsPattern("JOB FAILED " + holder + " .*(FN001|FN003)");
        // The successor's run lands whole.
        (frozen == a ? b : a).awaitOutput("JOB DONE " + successor, Duration.ofSeconds(20));
        assertThat(count(c, "SELECT count(*) FROM quartz_row WHERE node = '" + successor + "'")).isEqualTo(20);
        assertThat(count(c, "SELECT count(*) FROM quartz_row WHERE id > " + firstOfSuccessor
            + " AND token_seen = '" + tokenOfFrozen + "'"))
            .as("no row of the frozen run's token after the successor's first").isZero();
        assertThat(strings(c, "SELECT DISTINCT token_seen FROM quartz_row WHERE node = '" + successor + "'"))
            .as("the successor's run carries its token").containsExactly(Long.toString(tokenOfSuccessor));

        assertThat(Http.get("http://127.0.0.1:" + frozenPort + "/status")).as("/status lists the job's lock")
            .contains("\"library\":\"quartz\"").contains("\"lock\":\"billing.settle\"");
      }
    }
  }

  /** Without fencing.quartz.jobs the agent leaves Quartz alone: the job runs whole, its writes untagged. */
  @Test
  void withoutDeclaredJobsTheAgentLeavesQuartzAlone() throws Exception {
    try (PostgresServer pg = PostgresServer.start()) {
      String url = url(pg);
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        createTables(s);
      }
      int port = Ports.freePort();
      try (AgentJvm a = node(Path.of(System.getProperty("java.home")), "node-a", url,
              "lease.enabled=false,log.level=debug,http.port=" + port, true);
          Connection c = DriverManager.getConnection(url)) {
        String output = a.awaitOutput("JOB DONE node-a", Duration.ofSeconds(30));
        assertThat(count(c, "SELECT count(*) FROM quartz_row WHERE token_seen IS NULL")).isEqualTo(20);
        assertThat(output).as("the job's class is left as it is").doesNotContain("instrumented " + QuartzApp.class.getName());
        assertThat(Http.get("http://127.0.0.1:" + port + "/status")).doesNotContain("\"library\":\"quartz\"");
      }
    }
  }

  private static String url(PostgresServer pg) {
    return pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
  }

  /** Quartz's tables from the script in its jar, and the job's table. */
  private static void createTables(Statement s) throws Exception {
    String script;
    try (InputStream in = QuartzIT.class.getClassLoader()
        .getResourceAsStream("org/quartz/impl/jdbcjobstore/tables_postgres.sql")) {
      script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    for (String statement : script.replaceAll("(?m)^--.*$", "").split(";")) {
      if (!statement.isBlank() && !statement.trim().equalsIgnoreCase("commit")) {
        s.execute(statement);
      }
    }
    s.execute("CREATE TABLE quartz_row (id BIGSERIAL PRIMARY KEY, node TEXT NOT NULL, step INT NOT NULL, "
        + "recovering BOOLEAN NOT NULL, token_seen TEXT DEFAULT nullif(current_setting('fencing.token', true), ''))");
  }

  private static AgentJvm node(Path javaHome, String name, String url, String agentArgs, boolean schedule) {
    AgentJvm jvm = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
        .classpath(AgentProcesses.appClasspath() + File.pathSeparator
            + AgentProcesses.libraries("quartz-", "slf4j-api-", "postgresql-"))
        .mainClass(QuartzApp.class.getName()).sysProp("app.steps", "20").sysProp("app.step-ms", "100")
        .args(schedule ? new String[] {url, name, "schedule"} : new String[] {url, name})
        .agentArgs(agentArgs + ",holder.id=" + name).start();
    jvm.awaitOutput("APP STARTED", Duration.ofSeconds(30));
    return jvm;
  }
}
