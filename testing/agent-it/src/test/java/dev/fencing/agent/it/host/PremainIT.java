package dev.fencing.agent.it.host;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.release.CliAndAttachIT;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.apps.HelloApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** premain is a guest's entry: quick, and it starts no logging framework and no JMX in the host JVM. */
class PremainIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void premainLoadsNeitherJavaUtilLoggingNorJmxAndHandsTheRestToDaemonThreads(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome).name("premain-java" + AgentProcesses.javaVersion(javaHome))
            .jvmArg("-Xlog:class+load=info:stdout")
            .agentArgs("lock=premain,log.level=debug,etcd.endpoints=" + etcd.endpoints())
            .classpath(AgentProcesses.appClasspath()).mainClass(CliAndAttachIT.IdleApp.class.getName()).start()) {
      String out = app.awaitOutput("holding lock 'premain'", Duration.ofSeconds(20));
      int premainEnd = out.indexOf("premain took");
      assertThat(premainEnd).as("premain end marker").isPositive();
      String duringPremain = out.substring(0, premainEnd);
      assertThat(duringPremain)
          .contains("dev.fencing.agent.startup.AgentStarter") // the window really covers the agent's premain
          .doesNotContain("java.util.logging.LogManager ")
          .doesNotContain("java.lang.management.ManagementFactory ")
          .doesNotContain("javax.management.")
          .doesNotContain("dev.fencing.agent.shaded.io.etcd.")
          .doesNotContain("dev.fencing.agent.shaded.io.micrometer.");
      long micros = Long.parseLong(out.substring(premainEnd).replaceAll("(?s)premain took (\\d+) us.*", "$1"));
      System.out.printf("premain took %d us on %s%n", micros, javaHome);
      assertThat(micros).as("premain duration, us").isLessThan(1_000_000);
      assertThat(out).contains("IDLE");
      // Holding the lease brings up the bundled Netty; its JFR event support would register its events, loading
      // JFR's metadata (~100 classes, ~0.3 s of CPU) into a JVM that records nothing. Netty still asks whether JFR
      // is available (a few classes).
      assertThat(out).as("classes loaded up to the held lease").doesNotContain("jdk.jfr.internal.MetadataRepository")
          // An instrumentation's advice is read when a class it instruments loads, not for libraries never loaded
          // (reading all 80 cost ~0.5 s of CPU and ~13 MB).
          .doesNotContain("dev.fencing.agent.instrumentation.kafkaclients.SendAdvice ");
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void theAgentNeverKeepsTheJvmAliveAndReleasesTheLeaseAtExit(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome).name("exit-java" + AgentProcesses.javaVersion(javaHome))
            .agentArgs("lock=exit,http.port=0,etcd.endpoints=" + etcd.endpoints())
            .classpath(AgentProcesses.appClasspath()).mainClass(HelloApp.class.getName()).args("3000").start()) {
      app.awaitOutput("holding lock 'exit'", Duration.ofSeconds(20));
      assertThat(app.awaitExit(Duration.ofSeconds(10))).as("exit code once main returned").isZero();
      // The shutdown hook revoked the lease: the lock key is gone at once, not after the TTL.
      assertThat(etcd.etcdctl("get", "--prefix", "/fencing/locks/exit").trim()).isEmpty();
    }
  }

  /**
   * An application whose own class path carries the agent's unshaded modules (a build that depends on
   * fencing-agent-bootstrap or -core): the system loader then finds the entry class there first, and the agent must
   * still load its core from the -javaagent jar, not fail with ClassNotFoundException.
   */
  @ParameterizedTest
  @MethodSource("javaHomes")
  void theAgentStartsWhenTheAppClassPathCarriesItsUnshadedModules(Path javaHome) throws Exception {
    List<String> own = java.util.Arrays.stream(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
        .filter(e -> e.matches(".*(fencing-agent-(bootstrap|core)[^/]*\\.jar|agent/(bootstrap|core)/target/classes)$"))
        .toList();
    assertThat(own).as("the agent's bootstrap and core modules on the test class path").hasSize(2);
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome).name("unshaded-java" + AgentProcesses.javaVersion(javaHome))
            .agentArgs("lock=unshaded,etcd.endpoints=" + etcd.endpoints())
            .classpath(String.join(java.io.File.pathSeparator, own) + java.io.File.pathSeparator
                + AgentProcesses.appClasspath())
            .mainClass(CliAndAttachIT.IdleApp.class.getName()).start()) {
      String out = app.awaitOutput("holding lock 'unshaded'", Duration.ofSeconds(20));
      assertThat(out).doesNotContain("failed to start").contains("IDLE");
    }
  }
}
