package dev.fencing.agent.it.release;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code java -jar fencing-agent.jar attach <pid> [key=value ...]}: doctor's checks, then the agent loaded into a
 * running JVM that was started without it; and a clear error, with nothing loaded, for each way it cannot work.
 */
class AttachCommandIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  private static AgentJvm attach(Path javaHome, String name, List<String> jvmArgs, String... args) {
    AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
        .noAgent().executableJar(Path.of(System.getProperty("fencing.agent.jar"))).args(args);
    jvmArgs.forEach(b::jvmArg);
    return b.start();
  }

  private static AgentJvm idle(Path javaHome, String name, String... jvmArgs) {
    AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
        .noAgent().classpath(AgentProcesses.appClasspath()).mainClass(CliAndAttachIT.IdleApp.class.getName());
    for (String a : jvmArgs) {
      b.jvmArg(a);
    }
    AgentJvm jvm = b.start();
    jvm.awaitOutput("IDLE", Duration.ofSeconds(20));
    return jvm;
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void attachLoadsTheAgentIntoARunningJvmWhichCampaigns(Path javaHome) throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); AgentJvm app = idle(javaHome, "attach-target")) {
      try (AgentJvm cli = attach(javaHome, "attach-ok", List.of(), "attach", Long.toString(app.pid()), "lock=attached",
          "http.port=" + port, "etcd.endpoints=" + etcd.endpoints())) {
        assertThat(cli.awaitExit(Duration.ofSeconds(60))).as(cli.output()).isZero();
        assertThat(cli.output()).contains("doctor: OK").contains("lock 'attached' (JVM-wide): not held")
            .contains("attach: loaded ").contains(" into pid " + app.pid() + " (" + CliAndAttachIT.IdleApp.class.getName());
      }
      String s = Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(20));
      assertThat(Long.parseLong(Http.jsonField(s, "token"))).isPositive();
      assertThat(etcd.etcdctl("get", "--prefix", "/fencing/locks/attached", "--keys-only")).contains("/fencing/locks/attached");
      assertThat(app.output()).contains("holding lock 'attached'");
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void attachSaysWhyItCannotAndLoadsNothing(Path javaHome) throws Exception {
    int port = Ports.freePort();
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor();
    try (AgentJvm cli = attach(javaHome, "attach-nopid", List.of(), "attach", Long.toString(gone.pid()), "lock=a")) {
      assertThat(cli.awaitExit(Duration.ofSeconds(30))).isEqualTo(1);
      assertThat(cli.output()).contains("attach: no process with pid " + gone.pid());
    }
    try (AgentJvm cli = attach(javaHome, "attach-nonumber", List.of(), "attach", "ledger-worker", "lock=a")) {
      assertThat(cli.awaitExit(Duration.ofSeconds(30))).isEqualTo(2);
      assertThat(cli.output()).contains("attach: 'ledger-worker' is not a process id").contains("usage: attach <pid>");
    }
    Process notJava = new ProcessBuilder("sleep", "60").start();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm closed = idle(javaHome, "attach-disabled", "-XX:+DisableAttachMechanism");
        AgentJvm open = idle(javaHome, "attach-open")) {
      String ok = "etcd.endpoints=" + etcd.endpoints();
      try (AgentJvm cli = attach(javaHome, "attach-refused", List.of(), "attach", Long.toString(closed.pid()), "lock=a",
          "http.port=" + port, ok)) {
        assertThat(cli.awaitExit(Duration.ofSeconds(60))).isEqualTo(1);
        assertThat(cli.output()).contains("doctor: OK").contains("attach: cannot attach to pid " + closed.pid())
            .contains("-XX:+DisableAttachMechanism");
      }
      try (AgentJvm cli = attach(javaHome, "attach-notjava", List.of(), "attach", Long.toString(notJava.pid()),
          "lock=a", ok)) {
        assertThat(cli.awaitExit(Duration.ofSeconds(60))).isEqualTo(1);
        assertThat(cli.output()).contains("attach: cannot attach to pid " + notJava.pid());
      }
      // doctor's checks come first: with etcd unreachable nothing is loaded.
      try (AgentJvm cli = attach(javaHome, "attach-doctor", List.of(), "attach", Long.toString(open.pid()), "lock=a",
          "http.port=" + port, "etcd.timeout=1s", "etcd.endpoints=http://127.0.0.1:" + Ports.freePort())) {
        assertThat(cli.awaitExit(Duration.ofSeconds(60))).isEqualTo(1);
        assertThat(cli.output()).contains("doctor: FAILED")
            .contains("attach: not attached to " + open.pid() + ": doctor found a problem (above)");
      }
      // A runtime without the Attach API (a JRE, a trimmed image): said before anything else.
      try (AgentJvm cli = attach(javaHome, "attach-noapi", List.of("--limit-modules", "java.se"), "attach",
          Long.toString(open.pid()), "lock=a", ok)) {
        assertThat(cli.awaitExit(Duration.ofSeconds(60))).isEqualTo(1);
        assertThat(cli.output()).contains("has no Attach API (module jdk.attach): run attach with the java of a JDK");
      }
      assertThat(refused(port)).as("no agent endpoint anywhere").isTrue();
      assertThat(open.output()).doesNotContain("[fencing-agent]");
      assertThat(closed.output()).doesNotContain("[fencing-agent]");
    } finally {
      notJava.destroyForcibly();
    }
  }

  private static boolean refused(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      return false;
    } catch (java.io.IOException e) {
      return true;
    }
  }
}
