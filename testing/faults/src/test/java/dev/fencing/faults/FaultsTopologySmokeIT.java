package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The fault harness on its other topology, in the test command: ZooKeeper as the coordinator (3 servers), two locks
 * held through declared sections, a Kafka topic of 3 partitions; one trial of each fault that hits the holder or the
 * coordinator and keeps its data (pause, partition from ZooKeeper, ZooKeeper leader killed, every server restarted;
 * about 70 s). One run for both options, and no wipe (a wipe with fresh workers takes 30-40 s on its own), to keep the
 * test command's fault smokes near 3 minutes; the wipe on ZooKeeper and the long runs are
 * {@code scripts/faults.sh 100 --coordinator=zookeeper} and {@code --locks=2} (RELIABILITY.md).
 */
class FaultsTopologySmokeIT {

  @Test
  void onZooKeeperWithTwoLocksAndThreePartitionsNoStaleWriteIsAcceptedAndNothingIsLost() {
    Topology topology = new Topology(Topology.Coordinator.ZOOKEEPER, 2, 3);
    FaultRun.Options options = new FaultRun.Options(FaultRun.Fault.COORDINATOR_RESTART.ordinal() + 1,
        Long.getLong("fencing.faults.seed", 20261202L), 3, FaultRun.Options.defaultAgentJar(), null, 0, topology);
    FaultRun.Outcome outcome = FaultRun.run(options, System.out);
    HistoryChecker.Result result = outcome.result();
    assertThat(outcome.summary()).as(String.join("\n", result.violations()))
        .contains("stale_accepted=0 lost=0").contains(" unfenced_stale=0 ").endsWith(" coordinator=zookeeper locks=2");
    assertThat(result.violations()).as("history in " + outcome.outDir()).isEmpty();
    assertThat(outcome.faults().keySet()).contains(FaultRun.Fault.PAUSE, FaultRun.Fault.PARTITION,
        FaultRun.Fault.LEADER_KILL, FaultRun.Fault.COORDINATOR_RESTART);
    assertThat(result.blocked()).isPositive();
    assertThat(result.rejected()).isPositive();
    assertThat(outcome.notes()).as("liveness, harness").noneMatch(n -> n.startsWith("liveness")
        || n.startsWith("harness"));
    // Both locks wrote to every resource, and Kafka's records went to all three partitions.
    assertThat(outcome.acceptedPerStream().keySet()).contains("pg/faults-1", "pg/faults-2", "mariadb/faults-1", "mariadb/faults-2",
        "http/faults-1", "http/faults-2", "kafka/faults-1/p0", "kafka/faults-1/p1", "kafka/faults-1/p2",
        "kafka/faults-2/p0", "kafka/faults-2/p1", "kafka/faults-2/p2");
  }
}
