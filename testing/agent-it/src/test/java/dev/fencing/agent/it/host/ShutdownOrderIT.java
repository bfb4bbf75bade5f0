package dev.fencing.agent.it.host;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.http.HttpAppJvm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.http.RecordingServer;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The order of shutdown: the application's own shutdown hooks run while the JVM still holds its lease, and the lease
 * is given back only after the last of them: a hook's last write carries the live lease's token, and the successor
 * takes over after it, not while it runs.
 */
class ShutdownOrderIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void anApplicationShutdownHookWritesUnderTheLeaseAndTheSuccessorTakesOverOnlyAfterIt(Path javaHome)
      throws Exception {
    int portA = Ports.freePort();
    int portB = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer fenced = new RecordingServer();
        RecordingServer thirdParty = new RecordingServer();
        AgentJvm a = HttpAppJvm.start(javaHome, "exit-a", "exit", portA, fenced, etcd)) {
      long tokenA = Long.parseLong(Http.jsonField(
          Http.awaitStatus(portA, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token"));
      try (AgentJvm b = HttpAppJvm.start(javaHome, "exit-b", "exit", portB, fenced, etcd)) {
        Http.awaitStatus(portB, "\"state\":\"STANDBY\"", Duration.ofSeconds(15));
        AppStdin stdinA = AppStdin.http(a);
        // the third party is not fenced: after A's lease ends, A's requests to it are blocked
        assertThat(stdinA.run("ONEXIT 1500 POST " + thirdParty.base() + "/last")).isEqualTo("STATUS hook");

        long exitAsked = System.nanoTime();
        a.process().destroy(); // SIGTERM: the JVM runs its shutdown hooks
        long bHolding = 0;
        while (System.nanoTime() - exitAsked < Duration.ofSeconds(10).toNanos()) {
          if (bHolding == 0 && Http.get("http://127.0.0.1:" + portB + "/status").contains("\"state\":\"HOLDING\"")) {
            bHolding = System.nanoTime();
          }
          if (bHolding != 0 && !a.isAlive()) {
            break;
          }
          Thread.sleep(20);
        }
        a.awaitExit(Duration.ofSeconds(5));
        assertThat(a.output()).as(a.output()).contains("EXIT STATUS 200");
        // the hook's request went out with A's token, before B held the lock
        assertThat(thirdParty.received).containsExactly("POST /last token=[" + tokenA + "] lock=[exit]");
        assertThat(bHolding).as("B took over").isNotZero();
        assertThat((bHolding - exitAsked) / 1_000_000).as("B's takeover, ms after A was asked to exit")
            .isGreaterThanOrEqualTo(1500);
        // and quickly after A's last hook: the lease was revoked, not left to expire (TTL 3 s)
        assertThat((bHolding - exitAsked) / 1_000_000).isLessThan(1500 + 2500);
        long tokenB = Long.parseLong(Http.jsonField(Http.get("http://127.0.0.1:" + portB + "/status"), "token"));
        assertThat(tokenB).isGreaterThan(tokenA);
      }
    }
  }
}
