package dev.fencing.agent.it.host;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A misconfigured agent says what is wrong in one line, lets the application start, and honours fail-mode. */
class MisconfigurationIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /**
   * Reading the settings is the agent's own logic, the same on every Java: this build's (the start without etcd runs
   * on both).
   */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void invalidTtlIsOneClearLineAndBlocksWithFailModeClosed(Path javaHome) throws Exception {
    try (Agent agent = AgentProcesses.start(javaHome, "banana", "lock=cfg,lease.ttl=banana")) {
      String s = agent.awaitState("FAILED", Duration.ofSeconds(10));
      assertThat(agent.jvm.output()).contains("[fencing-agent] ERROR invalid configuration: fencing.lease.ttl='banana' "
          + "(agent argument lease.ttl): expected a duration such as 10s, 500ms, 2m or 1h");
      assertThat(Http.jsonField(s, "configProblems")).contains("fencing.lease.ttl='banana'");
      Thread.sleep(100);
      assertThat(agent.lastDecision()).isEqualTo("BLOCK AGENT_FAILED 0");
    }
  }

  /**
   * An unknown key, and the variables Kubernetes injects for a Service named fencing-etcd, are warnings: the agent
   * ignores them and holds its lease as configured, rather than turn FAILED and block every side effect of the pod.
   */
  @ParameterizedTest
  @MethodSource("currentJava")
  void unknownKeysAndKubernetesServiceLinksAreWarningsAndTheAgentHoldsItsLease(Path javaHome) throws Exception {
    try (dev.fencing.testing.EtcdCluster etcd = dev.fencing.testing.EtcdCluster.single()) {
      int port = Ports.freePort();
      try (dev.fencing.testing.AgentJvm jvm = dev.fencing.testing.AgentJvm.builder().javaHome(javaHome)
          .name("unknown-java" + AgentProcesses.javaVersion(javaHome))
          .agentArgs("lock=cfg,bogus.key=1,lease.ttl=3s,http.port=" + port + ",etcd.endpoints=" + etcd.endpoints())
          .env("FENCING_ETCD_SERVICE_HOST", "10.96.0.12").env("FENCING_ETCD_PORT", "tcp://10.96.0.12:2379")
          .env("FENCING_ETCD_PORT_2379_TCP_ADDR", "10.96.0.12")
          .classpath(AgentProcesses.appClasspath())
          .mainClass(dev.fencing.agent.it.apps.ProbeApp.class.getName()).start()) {
        String s = Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(20));
        assertThat(jvm.output()).contains("WARN configuration: unknown key fencing.bogus.key (agent argument"
            + " bogus.key): ignored").contains("look like Kubernetes service links");
        assertThat(jvm.output()).doesNotContain("invalid configuration");
        assertThat(s).contains("\"configProblems\":[]").contains("fencing.bogus.key");
      }
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void unreachableEtcdDoesNotDelayStartupAndFailModeDecides(Path javaHome) throws Exception {
    int closedPort = Ports.freePort();
    long start = System.nanoTime();
    try (Agent closed = AgentProcesses.start(javaHome, "unreachable-closed",
            "lock=cfg,etcd.timeout=1s,etcd.endpoints=http://127.0.0.1:" + closedPort);
        Agent open = AgentProcesses.start(javaHome, "unreachable-open",
            "lock=cfg,etcd.timeout=1s,fail-mode=open,etcd.endpoints=http://127.0.0.1:" + closedPort)) {
      long startedMs = (System.nanoTime() - start) / 1_000_000;
      assertThat(startedMs).as("two apps started despite etcd being down, ms").isLessThan(8000);
      String s = closed.awaitState("FAILED", Duration.ofSeconds(15));
      assertThat(Http.jsonField(s, "detail")).contains("etcd unreachable");
      open.awaitState("FAILED", Duration.ofSeconds(15));
      Thread.sleep(100);
      assertThat(closed.lastDecision()).isEqualTo("BLOCK AGENT_FAILED 0");
      assertThat(open.lastDecision()).isEqualTo("PASS - 0");
      assertThat(closed.jvm.output()).containsPattern("WARN lock 'cfg': etcd error: .*; retrying");
    }
  }
}
