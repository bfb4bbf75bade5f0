package dev.fencing.agent.it;

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

  @ParameterizedTest
  @MethodSource("javaHomes")
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

  @ParameterizedTest
  @MethodSource("javaHomes")
  void unknownKeyIsReportedAndFailModeOpenLetsSideEffectsPass(Path javaHome) throws Exception {
    try (Agent agent = AgentProcesses.start(javaHome, "unknown", "lock=cfg,bogus.key=1,fail-mode=open")) {
      agent.awaitState("FAILED", Duration.ofSeconds(10));
      assertThat(agent.jvm.output()).contains("ERROR invalid configuration: unknown key fencing.bogus.key (agent argument bogus.key)");
      Thread.sleep(100);
      assertThat(agent.lastDecision()).isEqualTo("PASS - 0");
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
