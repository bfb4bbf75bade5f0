package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault harness's work modes in the test command ({@code --work=section|curator|jetcd|leader}): the workers'
 * writes inside a declared section whose transactions commit after it returned, under the worker's own Curator mutex
 * or jetcd lock (captured by the agent), or on a scheduler started from a Curator leader's {@code takeLeadership};
 * a Kafka send callback that writes, and the unfenced destinations, in each. Two trials per mode (the holder frozen
 * past its session or lease, then cut from the coordinator; about 20 s each). The long runs are
 * {@code scripts/faults.sh 300 --work=<mode>} (RELIABILITY.md).
 */
class FaultsWorkModesSmokeIT {

  @ParameterizedTest
  @EnumSource(value = Topology.Work.class, names = {"SECTION", "CURATOR", "JETCD", "LEADER"})
  void noStaleWriteReachesAFencedOrAnUnfencedDestination(Topology.Work work) {
    Topology topology = Topology.apply(Topology.DEFAULT, "--work=" + work.label);
    FaultRun.Options options = new FaultRun.Options(FaultRun.Fault.PARTITION.ordinal() + 1,
        Long.getLong("fencing.faults.seed", 20261205L), 3, FaultRun.Options.defaultAgentJar(), null, 0, topology);
    FaultRun.Outcome outcome = FaultRun.run(options, System.out);
    HistoryChecker.Result result = outcome.result();
    assertThat(outcome.summary()).as(String.join("\n", result.violations()))
        .contains("stale_accepted=0 lost=0").contains(" unfenced_stale=0 ").endsWith(" work=" + work.label);
    assertThat(result.violations()).as("history in " + outcome.outDir()).isEmpty();
    assertThat(outcome.faults().keySet()).contains(FaultRun.Fault.PAUSE, FaultRun.Fault.PARTITION);
    assertThat(outcome.notes()).as("liveness, harness").noneMatch(n -> n.startsWith("liveness")
        || n.startsWith("harness"));
    // The holder's writes reached every destination, the unfenced ones too, and its successor's lock stopped the
    // frozen or cut-off holder's later ones.
    assertThat(outcome.acceptedPerStream().keySet()).contains("pg", "mariadb", "http", "pg-unfenced",
        "http-unfenced", "kafka-unfenced");
    assertThat(result.unfencedWrites()).isPositive();
    assertThat(result.blocked() + result.rejected()).isPositive();
  }
}
