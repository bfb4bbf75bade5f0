package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The fault harness's smoke run in the test command: 10 trials, one of each fault kind (holder frozen past its TTL,
 * holder partitioned from etcd, etcd leader killed, all of etcd restarted, etcd wiped, a holder's in-flight writes
 * delayed past its successor's, holder cut from a resource, PostgreSQL or MariaDB crashed, the Kafka broker killed,
 * w1's wall clock jumped), 3 workers with the real agent jar, real etcd (3 nodes), PostgreSQL, MariaDB and Kafka. The full run is {@code scripts/faults.sh 200} (RELIABILITY.md).
 */
class FaultsSmokeIT {

  @Test
  void noStaleWriteIsAcceptedAndNoAcknowledgedWriteIsLost() {
    FaultRun.Options options = new FaultRun.Options(10, Long.getLong("fencing.faults.seed", 20261130L), 3,
        FaultRun.Options.defaultAgentJar(), null);
    FaultRun.Outcome outcome = FaultRun.run(options, System.out);
    HistoryChecker.Result result = outcome.result();
    // Every fault kind, once each.
    assertThat(outcome.faults().keySet()).containsExactlyInAnyOrder(FaultRun.Fault.values());
    assertThat(result.summary()).as(String.join("\n", result.violations())).contains("stale_accepted=0 lost=0")
        .contains(" unfenced_stale=0 ");
    assertThat(result.unfencedWrites()).as("the unfenced destinations received writes").isPositive();
    assertThat(result.violations()).as("history in " + outcome.outDir()).isEmpty();
    // The faults did happen to the workers: stale writes were stopped on both sides.
    assertThat(result.blocked()).isPositive();
    assertThat(result.rejected()).isPositive();
    assertThat(outcome.notes()).as("liveness, harness").noneMatch(n -> n.startsWith("liveness")
        || n.startsWith("harness"));
    assertThat(Arrays.stream(FaultRun.Fault.values())).hasSize(10);
  }
}
