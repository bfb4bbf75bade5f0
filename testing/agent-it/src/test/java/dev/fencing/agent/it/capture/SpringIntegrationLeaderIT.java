package dev.fencing.agent.it.capture;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.jdbc.JdbcTakeoverIT;

import static dev.fencing.agent.it.Checks.awaitCount;
import static dev.fencing.agent.it.Checks.count;
import static dev.fencing.agent.it.Checks.strings;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.it.leader.LeaderApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.ZooKeeperEnsemble;
import java.io.File;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Leader election with Spring Integration, unmodified, over ZooKeeper (the application's own lock, captured): the
 * ZooKeeper {@code LeaderInitiator} (a Curator LeaderSelector whose {@code takeLeadership} only waits) and a
 * {@code LockRegistryLeaderInitiator} over a {@code ZookeeperLockRegistry}. The leader's work runs on a scheduler
 * started from {@code onGranted}: a periodic task scheduled inside the captured lock's scope runs in it. The leader's
 * writes to a table fenced for the captured lock carry its token; after the leader is frozen past its session and
 * another takes over, none of the frozen leader's writes lands after the successor's first, fenced table or not.
 */
class SpringIntegrationLeaderIT {
  private static final int SESSION_MS = 3000;

  /** Both initiators on the newest Java (which thread runs the leader's work is the agent's own logic). */
  static Stream<Arguments> initiators() {
    Path newest = AgentProcesses.newestJava().get(0);
    return Stream.of(Arguments.of(newest, "selector", "leaders.ledger"),
        Arguments.of(newest, "registry", "registry.ledger"));
  }

  @ParameterizedTest(name = "{1} on {0}")
  @MethodSource("initiators")
  void theLeadersScheduledWorkIsFencedByTheLeadershipItStartedIn(Path javaHome, String mode, String lock)
      throws Exception {
    try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.start(1);
        JdbcTakeoverIT.Database db = JdbcTakeoverIT.start("postgresql");
        Connection c = DriverManager.getConnection(db.url())) {
      try (Statement s = c.createStatement()) {
        String token = "token bigint DEFAULT nullif(current_setting('fencing.token', true), '')::bigint";
        s.execute("CREATE TABLE leader_work (id bigserial PRIMARY KEY, writer text, " + token + ")");
        s.execute("CREATE TABLE leader_log (id bigserial PRIMARY KEY, writer text, " + token + ")");
      }
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("leader_work"), lock, false, false));
      int portA = Ports.freePort();
      try (AgentJvm a = app(javaHome, mode, "a", portA, zk, db.url())) {
        a.awaitOutput("GRANTED", Duration.ofSeconds(20));
        awaitCount(c, "SELECT count(*) FROM leader_work WHERE writer = 'a'", 3, Duration.ofSeconds(15));
        String status = Http.get("http://127.0.0.1:" + portA + "/status");
        assertThat(status).contains("\"lock\":\"" + lock + "\"");
        assertThat(strings(c, "SELECT DISTINCT coalesce(token::text, 'untagged') FROM leader_work WHERE writer = 'a'"))
            .as("the leader's scheduled writes carry the captured leadership's token").hasSize(1)
            .doesNotContain("untagged");

        int portB = Ports.freePort();
        try (AgentJvm b = app(javaHome, mode, "b", portB, zk, db.url())) {
          Thread.sleep(1000); // B waits for the leadership
          a.suspend(); // past the session timeout: ZooKeeper ends A's session and B leads
          b.awaitOutput("GRANTED", Duration.ofSeconds(SESSION_MS / 1000 + 20));
          awaitCount(c, "SELECT count(*) FROM leader_log WHERE writer = 'b'", 2, Duration.ofSeconds(15));
          long firstB = count(c, "SELECT min(id) FROM leader_log WHERE writer = 'b'");
          long firstBWork = count(c, "SELECT min(id) FROM leader_work WHERE writer = 'b'");
          a.resume();
          Thread.sleep(3000); // A's scheduler runs until its leadership is revoked
          assertThat(count(c, "SELECT count(*) FROM leader_log WHERE writer = 'a' AND id > " + firstB))
              .as("the frozen leader's writes to the unfenced table after its successor's first").isZero();
          assertThat(count(c, "SELECT count(*) FROM leader_work WHERE writer = 'a' AND id > " + firstBWork))
              .as("the frozen leader's writes to the fenced table after its successor's first").isZero();
        }
      }
    }
  }

  private static AgentJvm app(Path javaHome, String mode, String name, int port, ZooKeeperEnsemble zk, String url) {
    String classpath = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar")
        + File.pathSeparator + AgentProcesses.testJars();
    AgentJvm jvm = AgentJvm.builder().javaHome(javaHome).name("leader-" + mode + "-" + name).classpath(classpath)
        .mainClass(LeaderApp.class.getName()).args(mode, zk.connectString(), Integer.toString(SESSION_MS), url, name)
        .agentArgs("lease.enabled=false,capture.safety-margin=300ms,http.port=" + port).start();
    jvm.awaitOutput("APP STARTED", Duration.ofSeconds(30));
    return jvm;
  }
}
