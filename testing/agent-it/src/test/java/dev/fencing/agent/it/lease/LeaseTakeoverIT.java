package dev.fencing.agent.it.lease;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.testing.EtcdCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Two JVMs on one lock: one holder at a time, and a paused holder never acts on its old token after waking. */
class LeaseTakeoverIT {
  private static final String ARGS = "lock=takeover,lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints=";

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void pausedHolderIsReplacedAndNeverUsesItsOldTokenAfterResume(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        Agent a = AgentProcesses.start(javaHome, "a", ARGS + etcd.endpoints());
        Agent b = AgentProcesses.start(javaHome, "b", ARGS + etcd.endpoints())) {
      awaitOneHolder(a, b, Duration.ofSeconds(15));

      // Exactly one holder at any sampled moment, with a positive token.
      for (int i = 0; i < 20; i++) {
        String sa = a.state();
        String sb = b.state();
        assertThat(List.of(sa, sb)).as("sample %d", i).containsOnlyOnce("HOLDING");
        Thread.sleep(50);
      }
      Agent holder = "HOLDING".equals(a.state()) ? a : b;
      Agent other = holder == a ? b : a;
      long oldToken = holder.token();
      assertThat(oldToken).isPositive();
      assertThat(holder.lastDecision()).isEqualTo("TAG - " + oldToken);

      // Pause the holder past its TTL: the other must take over with a higher token within TTL + 2 s.
      long paused = System.nanoTime();
      holder.jvm.suspend();
      String took = other.awaitState("HOLDING", Duration.ofSeconds(3 + 2));
      long tookMs = (System.nanoTime() - paused) / 1_000_000;
      long newToken = Long.parseLong(dev.fencing.testing.Http.jsonField(took, "token"));
      assertThat(newToken).isGreaterThan(oldToken);
      assertThat(tookMs).isLessThanOrEqualTo(5000);
      Thread.sleep(1500);

      // Wake the old holder: its very first decision must not be a tag, and its status must not say HOLDING.
      holder.jvm.resume();
      String resumed = holder.jvm.awaitOutput("RESUMED", Duration.ofSeconds(5));
      Matcher m = Pattern.compile("RESUMED (\\d+) (\\w+) (\\w+|-) (\\d+)").matcher(resumed);
      assertThat(m.find()).isTrue();
      assertThat(m.group(2)).as("first decision after resume").isEqualTo("BLOCK");
      assertThat(m.group(3)).isIn("EXPIRED", "LOST");
      String status = holder.status();
      assertThat(dev.fencing.testing.Http.jsonField(status, "state")).isIn("EXPIRED", "LOST");

      // It goes back to campaigning and never holds while the other does.
      for (int i = 0; i < 30; i++) {
        assertThat(holder.state()).as("old holder, sample %d", i).isNotEqualTo("HOLDING");
        assertThat(other.state()).isEqualTo("HOLDING");
        Thread.sleep(100);
      }
      assertThat(holder.lastDecision()).startsWith("BLOCK");
      assertThat(holder.metrics()).contains("fencing_lease_losses_total{lock=\"takeover\",reason=\"deadline_passed\"} 1.0");

      // When the new holder goes away (revoking at shutdown), the old one takes over with a higher token still.
      other.close();
      String again = holder.awaitState("HOLDING", Duration.ofSeconds(5));
      assertThat(Long.parseLong(dev.fencing.testing.Http.jsonField(again, "token"))).isGreaterThan(newToken);
    }
  }

  static void awaitOneHolder(Agent a, Agent b, Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < end) {
      if ("HOLDING".equals(a.state()) || "HOLDING".equals(b.state())) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("no holder within " + timeout + ": a=" + a.status() + " b=" + b.status());
  }
}
