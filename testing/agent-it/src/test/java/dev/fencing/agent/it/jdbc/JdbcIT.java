package dev.fencing.agent.it.jdbc;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.apps.JdbcApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The JDBC hook with a real driver (H2, in the app's JVM): session tagging, blocking after expiry, reads untouched. */
public class JdbcIT {
  public static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /**
   * Which pair a pooled connection carries is the agent's logic, the same on every Java: this build's.
   */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  /** The JDBC app with the agent, driven over stdin. */
  public static final class JdbcJvm implements AutoCloseable {
    public final AgentJvm jvm;
    public final int port;
    private final AppStdin stdin;

    /** {@code agentArgs} null: no agent at start (to attach one later). */
    public JdbcJvm(Path javaHome, String name, String agentArgs, String jdbcUrl, String classpath) {
      port = Ports.freePort();
      AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
          .classpath(classpath).mainClass(JdbcApp.class.getName()).args(jdbcUrl);
      jvm = (agentArgs == null ? b.noAgent() : b.agentArgs(agentArgs + ",http.port=" + port)).start();
      stdin = AppStdin.jdbc(jvm);
      jvm.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    }

    /** Sends one command and returns its answer line. */
    public String run(String command) throws IOException {
      return stdin.run(command);
    }

    @Override
    public void close() {
      jvm.close();
    }
  }

  private static final String[] LIBS = {"fencing.it.h2.jar", "fencing.it.hikari.jar", "fencing.it.slf4j.jar"};

  public static String classpath(String... jarProperties) {
    StringBuilder cp = new StringBuilder(AgentProcesses.appClasspath());
    for (String p : jarProperties) {
      cp.append(File.pathSeparator).append(System.getProperty(p));
    }
    return cp.toString();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void writesCarryTheTokenWhileHoldingAndAreBlockedAfterExpiryWhileReadsGoOn(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        JdbcJvm app = new JdbcJvm(javaHome, "jdbc-h2",
            // etcd is gone when the app closes: shutdown.timeout=0s, no wait for a release that cannot land.
            "lock=jdbc,lease.ttl=3s,lease.safety-margin=500ms,shutdown.timeout=0s,etcd.endpoints=" + etcd.endpoints(),
            "jdbc:h2:mem:ledger;DB_CLOSE_DELAY=-1", classpath(LIBS))) {
      String s = Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      String token = Http.jsonField(s, "token");

      assertThat(app.run("SQL CREATE TABLE account(id INT PRIMARY KEY, balance INT)")).startsWith("OK");
      assertThat(app.run("SQL INSERT INTO account VALUES (1, 100)")).isEqualTo("OK 1");
      assertThat(app.run("PREP UPDATE account SET balance = 90 WHERE id = 1")).isEqualTo("OK 1");
      assertThat(app.run("BATCH INSERT INTO account VALUES (2, 5);INSERT INTO account VALUES (3, 7)")).isEqualTo("OK 2");
      // The session carries the pair the fences read.
      assertThat(app.run("QUERY SELECT @fencing_token")).isEqualTo("ROW " + token);
      assertThat(app.run("QUERY SELECT @fencing_lock")).isEqualTo("ROW jdbc");

      // Lose the lease: etcd goes away, the local deadline passes.
      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(app.port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));

      // Unfenced database: writes are blocked by the agent with FN003 and never reach it; reads still work.
      assertThat(app.run("SQL UPDATE account SET balance = 0 WHERE id = 1"))
          .startsWith("ERR FN003 Fencing Agent blocked a jdbc side effect: lock 'jdbc', token " + token)
          .contains("expired");
      assertThat(app.run("PREP DELETE FROM account")).startsWith("ERR FN003");
      assertThat(app.run("BATCH INSERT INTO account VALUES (4, 1)")).startsWith("ERR FN003");
      assertThat(app.run("QUERY SELECT balance FROM account WHERE id = 1")).isEqualTo("ROW 90");
      assertThat(app.run("QUERY SELECT count(*) FROM account")).isEqualTo("ROW 3");

      String metrics = Http.get("http://127.0.0.1:" + app.port + "/metrics");
      assertThat(metrics)
          .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"jdbc\",outcome=\"blocked\"} 3.0")
          .containsPattern("fencing_side_effects_total\\{channel=\"jdbc\",fenced=\"false\",lock=\"jdbc\",outcome=\"tagged\"\\} [45]\\.0");
    }
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void afterANewGrantEveryPooledConnectionWritesWithTheNewPair(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        JdbcJvm app = new JdbcJvm(javaHome, "jdbc-hikari", "lock=pool,etcd.endpoints=" + etcd.endpoints(),
            "hikari:jdbc:h2:mem:pool;DB_CLOSE_DELAY=-1", classpath(LIBS))) {
      String first = Http.jsonField(Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      assertThat(app.run("SQL CREATE TABLE t(id INT AUTO_INCREMENT PRIMARY KEY, v INT)")).startsWith("OK");
      String pool = "POOL INSERT INTO t(v) VALUES (1)|SELECT @fencing_token";
      assertThat(app.run(pool)).isEqualTo("ROW " + String.join(",", first, first, first, first));

      // A new grant (the lock key removed by an operator; the agent campaigns again and gets a higher token).
      etcd.etcdctl("del", "--prefix", "/fencing/locks/pool/");
      String s = Http.awaitStatus(app.port, "\"acquisitionsTotal\":2", Duration.ofSeconds(10));
      String second = Http.jsonField(s, "token");
      assertThat(Long.parseLong(second)).isGreaterThan(Long.parseLong(first));
      Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(10));

      // Every pooled connection's first write after the grant already carries the new pair.
      assertThat(app.run(pool)).isEqualTo("ROW " + String.join(",", second, second, second, second));
      assertThat(app.run("QUERY SELECT count(*) FROM t")).isEqualTo("ROW 8");
      // One decision per statement, not one per proxy and one per driver statement.
      assertThat(Http.get("http://127.0.0.1:" + app.port + "/metrics"))
          .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"pool\",outcome=\"tagged\"} 9.0");
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void dynamicAttachFencesADriverThatWasAlreadyLoaded(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        JdbcJvm app = new JdbcJvm(javaHome, "jdbc-attach", null, "jdbc:h2:mem:late;DB_CLOSE_DELAY=-1", classpath(LIBS))) {
      assertThat(app.run("SQL CREATE TABLE t(v INT)")).startsWith("OK");
      assertThat(app.run("QUERY SELECT @fencing_token")).isEqualTo("ROW null");

      com.sun.tools.attach.VirtualMachine vm = com.sun.tools.attach.VirtualMachine.attach(Long.toString(app.jvm.pid()));
      try {
        vm.loadAgent(System.getProperty("fencing.agent.jar"),
            "lock=late,http.port=" + app.port + ",etcd.endpoints=" + etcd.endpoints());
      } finally {
        vm.detach();
      }
      String token = Http.jsonField(Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      // The H2 classes loaded before the attach were retransformed: writes now carry the token.
      assertThat(app.run("SQL INSERT INTO t VALUES (1)")).isEqualTo("OK 1");
      assertThat(app.run("QUERY SELECT @fencing_token")).isEqualTo("ROW " + token);
    }
  }
}
