package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault harness's outbox mode in the test command ({@code --work=outbox}, with the outbox on PostgreSQL and on
 * MariaDB, {@code --db=}): each worker's transaction writes its business rows and two events into the tokened outbox
 * table, three standalone relays (one per worker) deliver them to an unfenced HTTP receiver and an unfenced topic
 * whose receivers dedupe by event id, and each of the two trials (the holder frozen past its lease, then cut from
 * etcd) ends with a relay killed while the receiver holds its delivery's answer. The long runs are
 * {@code scripts/faults.sh 300 --work=outbox} and {@code scripts/faults.sh 100 --work=outbox --db=mariadb}
 * (RELIABILITY.md).
 */
class FaultsOutboxSmokeIT {

  @ParameterizedTest
  @EnumSource(Topology.Db.class)
  void noStaleEventIsDeliveredEveryCommittedEventIsAndEachIsAppliedOnce(Topology.Db db) {
    Topology topology = Topology.apply(Topology.apply(Topology.DEFAULT, "--work=outbox"), "--db=" + db.label);
    FaultRun.Options options = new FaultRun.Options(FaultRun.Fault.PARTITION.ordinal() + 1,
        Long.getLong("fencing.faults.seed", 20261205L), 3, FaultRun.Options.defaultAgentJar(), null, 0, topology);
    FaultRun.Outcome outcome = FaultRun.run(options, System.out);
    HistoryChecker.Result result = outcome.result();
    String mode = db == Topology.Db.POSTGRESQL ? " work=outbox " : " work=outbox db=" + db.label + " ";
    assertThat(outcome.summary()).as(String.join("\n", result.violations()))
        .contains("stale_accepted=0 lost=0").contains(mode)
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
