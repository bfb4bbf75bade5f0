package dev.fencing.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The demo's story and checks in the test command: the same orchestration scripts/demo.sh runs, on the agent jar and
 * sample apps this build produced, with real etcd, PostgreSQL and Kafka. Every claim the demo prints must hold, in
 * enforce mode and in observe mode (about 30 s each), and in the declared-sections story ({@code --sections}: two
 * Spring Boot replicas, about 45 s).
 */
class DemoIT {

  @Test
  void everyStaleSideEffectIsStoppedAndTheEndStateHolds() {
    Demo.Outcome outcome = run(false);
    assertThat(outcome.checks()).extracting(EndStateChecks.Check::claim)
        .contains("the webhook received nothing from worker-a after it resumed")
        .anyMatch(claim -> claim.startsWith("the webhook receiver got each committed transfer's notification"));
  }

  @Test
  void observeModeBlocksNothingAndTheFencesStillRejectEveryStaleWrite() {
    Demo.Outcome outcome = run(true);
    assertThat(outcome.checks()).extracting(EndStateChecks.Check::claim)
        .contains("observe mode: the webhook received worker-a's stale calls (enforce mode would have blocked them)");
  }

  @Test
  void sectionsTheJobRunsOnTheHolderOnlyBothReplicasServeAndTheFrozenRunIsRefused() {
    Demo.Outcome outcome = run(false, true);
    assertThat(outcome.checks()).extracting(EndStateChecks.Check::claim)
        .contains("the run replica-a was frozen in was refused when it woke, and replica-a wrote no settlement row"
            + " after the freeze");
  }

  private static Demo.Outcome run(boolean observe) {
    return run(observe, false);
  }

  private static Demo.Outcome run(boolean observe, boolean sections) {
    DemoOptions options = new DemoOptions(observe, false, sections,
        Path.of(System.getProperty("fencing.demo.root", ".")));
    Demo.Outcome outcome;
    try (Resources resources = new Resources()) {
      outcome = Demo.run(options, new Console(), resources);
    }
    assertThat(outcome.failure()).isNull();
    assertThat(outcome.exitCode()).isZero();
    assertThat(outcome.checks()).hasSize(sections ? 9 : 10).allSatisfy(c ->
        assertThat(c.ok()).as(c.claim() + ": " + c.evidence()).isTrue());
    return outcome;
  }
}
