package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The fault harness's outbox mode in the test command ({@code --work=outbox}): the workers' pg transactions write
 * their business rows and two events into the tokened outbox table, three standalone relays (one per worker)
 * deliver them to an unfenced HTTP receiver and an unfenced topic whose receivers dedupe by event id, and each of
 * the two trials (the holder frozen past its lease, then cut from etcd) ends with a relay killed while the receiver
 * holds its delivery's answer. The long run is {@code scripts/faults.sh 300 --work=outbox} (RELIABILITY.md).
 */
class FaultsOutboxSmokeIT {

  @Test
  void noStaleEventIsDeliveredEveryCommittedEventIsAndEachIsAppliedOnce() {
    Topology topology = Topology.apply(Topology.DEFAULT, "--work=outbox");
    FaultRun.Options options = new FaultRun.Options(FaultRun.Fault.PARTITION.ordinal() + 1,
        Long.getLong("fencing.faults.seed", 20261205L), 3, FaultRun.Options.defaultAgentJar(), null, 0, topology);
    FaultRun.Outcome outcome = FaultRun.run(options, System.out);
    HistoryChecker.Result result = outcome.result();
    assertThat(outcome.summary()).as(String.join("\n", result.violations()))
        .contains("stale_accepted=0 lost=0").contains(" work=outbox ")
        .contains(" outbox_stale=0 outbox_lost=0 outbox_applied_twice=0");
    assertThat(result.violations()).as("history in " + outcome.outDir()).isEmpty();
    assertThat(outcome.notes()).as("liveness, harness").noneMatch(n -> n.startsWith("liveness")
        || n.startsWith("harness") || n.startsWith("the outbox"));
    OutboxChecker.Result outbox = outcome.outbox();
    // Events were committed, every one applied once, and the killed relays' held events were delivered again.
    assertThat(outbox.events()).isPositive();
    assertThat(outbox.applied()).isEqualTo(outbox.events());
    assertThat(outcome.relaysKilledMidDelivery()).isPositive();
    assertThat(outbox.duplicates()).isGreaterThanOrEqualTo(outcome.relaysKilledMidDelivery());
    // The frozen or cut-off holder's later transactions were stopped: their events never existed.
    assertThat(result.blocked() + result.rejected()).isPositive();
  }
}
