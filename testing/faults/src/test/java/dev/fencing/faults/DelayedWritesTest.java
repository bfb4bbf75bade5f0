package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.faults.History.Accepted;
import dev.fencing.faults.History.Attempt;
import dev.fencing.faults.History.Outcome;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Hand-made histories of a delay fault: w1 (token 5) had its writes to pg held from 1,000 to 5,000 ms while w2
 * (token 6) took over and wrote.
 */
class DelayedWritesTest {
  private static final List<DelayedWrites.Hold> HOLD = List.of(new DelayedWrites.Hold("w1.1", "pg", 5, 1_000, 5_000));

  private static Attempt attempt(String id, String channel, long start, long end, Outcome outcome) {
    return new Attempt(id, id.substring(0, id.indexOf(':')), channel, start, end, "HOLDING", 0, outcome,
        outcome.name());
  }

  private static History history(List<Attempt> attempts, List<Accepted> accepted, Set<String> quarantined) {
    return new History(1, attempts, accepted, quarantined, Map.of(), Map.of(), -1);
  }

  @Test
  void aDelayedWriteRejectedByTheFenceOrOrderedBeforeTheSuccessorsPasses() {
    History h = history(List.of(
        attempt("w1.1:1", "pg", 900, 950, Outcome.ACKED), // ended before the hold: not delayed
        attempt("w1.1:2", "pg", 1_050, 5_100, Outcome.REJECTED), // held, then FN001
        attempt("w1.1:3", "pg", 4_990, -1, Outcome.NONE), // held, fate open, not accepted
        attempt("w1.1:4", "mariadb", 1_100, 1_200, Outcome.ACKED), // another resource: not held
        attempt("w2.1:1", "pg", 3_000, 3_100, Outcome.ACKED)),
        List.of(new Accepted("pg", 1, "w1.1:1", 5, 0), new Accepted("pg", 2, "w2.1:1", 6, 0),
            new Accepted("mariadb", 1, "w1.1:4", 5, 0)), Set.of());
    DelayedWrites.Verdict v = DelayedWrites.check(HOLD, h);
    assertThat(v.violations()).isEmpty();
    assertThat(v.held()).isEqualTo(2);
    assertThat(v.rejected()).isEqualTo(1);
    assertThat(v.open()).isEqualTo(1);
  }

  @Test
  void aDelayedWriteAcceptedBeforeEveryHigherTokenCountsAsOrderedBefore() {
    History h = history(List.of(attempt("w1.1:2", "pg", 1_050, 5_100, Outcome.FAILED),
        attempt("w2.1:1", "pg", 3_000, 3_100, Outcome.ACKED)),
        List.of(new Accepted("pg", 1, "w1.1:2", 5, 0), new Accepted("pg", 2, "w2.1:1", 6, 0)), Set.of());
    DelayedWrites.Verdict v = DelayedWrites.check(HOLD, h);
    assertThat(v.violations()).isEmpty();
    assertThat(v.acceptedBefore()).isEqualTo(1);
  }

  @Test
  void aDelayedWriteCommittedAfterTheSuccessorsIsAViolation() {
    History h = history(List.of(attempt("w1.1:2", "pg", 1_050, 5_100, Outcome.ACKED),
        attempt("w2.1:1", "pg", 3_000, 3_100, Outcome.ACKED)),
        List.of(new Accepted("pg", 1, "w2.1:1", 6, 0), new Accepted("pg", 2, "w1.1:2", 5, 0)), Set.of());
    DelayedWrites.Verdict v = DelayedWrites.check(HOLD, h);
    assertThat(v.violations()).singleElement().asString()
        .contains("delayed write accepted after a successor's: pg write w1.1:2 (token 5")
        .contains("after w2.1:1 with token 6");
    // The general checker's rule 1 sees the same write as a stale accept.
    assertThat(HistoryChecker.check(h).staleAccepted()).isEqualTo(1);
  }

  @Test
  void aDeadLetteredKafkaRecordCountsAsRejected() {
    List<DelayedWrites.Hold> hold = List.of(new DelayedWrites.Hold("w1.1", "kafka", 5, 1_000, 5_000));
    History h = history(List.of(attempt("w1.1:2", "kafka", 1_050, 5_100, Outcome.ACKED)), List.of(),
        Set.of("w1.1:2"));
    assertThat(DelayedWrites.check(hold, h).rejected()).isEqualTo(1);
  }

  @Test
  void commitOrderIsComparedWithinAKafkaPartitionOnly() {
    List<DelayedWrites.Hold> hold = List.of(new DelayedWrites.Hold("w1.1", "kafka", 5, 1_000, 5_000));
    History h = history(List.of(attempt("w1.1:2", "kafka", 1_050, 5_100, Outcome.ACKED),
        attempt("w2.1:1", "kafka", 3_000, 3_100, Outcome.ACKED)),
        List.of(new Accepted("kafka", 2, "w2.1:1", 6, 0, History.LOCK, 0),
            new Accepted("kafka", 5, "w1.1:2", 5, 0, History.LOCK, 1)), Set.of());
    DelayedWrites.Verdict v = DelayedWrites.check(hold, h);
    assertThat(v.violations()).isEmpty();
    assertThat(v.acceptedBefore()).isEqualTo(1);
  }
}
