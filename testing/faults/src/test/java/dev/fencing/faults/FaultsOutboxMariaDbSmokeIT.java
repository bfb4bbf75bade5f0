package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The fault harness's outbox mode with the outbox on MariaDB ({@code --work=outbox --db=mariadb}) in the test command:
 * each worker's MariaDB write is one transaction of its business row and two events in the tokened outbox table
 * (the MariaDB triggers), three standalone relays poll it and deliver to the unfenced receivers, which dedupe by
 * event id; each of the two trials (the holder frozen past its lease, then cut from etcd) ends with a relay killed
 * while the receiver holds its delivery's answer. The long run is {@code scripts/faults.sh 100 --work=outbox
 * --db=mariadb} (RELIABILITY.md).
 */
class FaultsOutboxMariaDbSmokeIT {

  @Test
  void noStaleEventIsDeliveredEveryCommittedEventIsAndEachIsAppliedOnce() {
    Topology topology = Topology.apply(Topology.apply(Topology.DEFAULT, "--work=outbox"), "--db=mariadb");
    FaultRun.Options options = new FaultRun.Options(FaultRun.Fault.PARTITION.ordinal() + 1,
        Long.getLong("fencing.faults.seed", 20261205L), 3, FaultRun.Options.defaultAgentJar(), null, 0, topology);
    FaultRun.Outcome outcome = FaultRun.run(options, System.out);
    HistoryChecker.Result result = outcome.result();
    assertThat(outcome.summary()).as(String.join("\n", result.violations()))
        .contains("stale_accepted=0 lost=0").contains(" work=outbox db=mariadb ")
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
