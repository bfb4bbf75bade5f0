package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.faults.History.Accepted;
import dev.fencing.faults.History.AgentMetrics;
import dev.fencing.faults.History.Attempt;
import dev.fencing.faults.History.Outcome;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Hand-made histories: a clean one passes; each kind of violation is caught and counted. */
class HistoryCheckerTest {

  /** A small history builder: attempts with times, what the resources accepted, the counters. */
  private static final class H {
    final List<Attempt> attempts = new ArrayList<>();
    final List<Accepted> accepted = new ArrayList<>();
    final Set<String> quarantined = new HashSet<>();
    final Map<String, AgentMetrics> metrics = new HashMap<>();
    final Map<String, Long> fence = new HashMap<>();
    long pgCounter = -1;
    final Map<String, Set<Long>> grants = new HashMap<>();
    final List<Accepted> unfenced = new ArrayList<>();
    final List<Long> wipes = new ArrayList<>();
    /** The token the next attempts' writer held (the attempts' tokenHeld). */
    long held;

    H attempt(String id, String channel, long start, long end, Outcome outcome) {
      String worker = id.substring(0, id.indexOf(':'));
      attempts.add(new Attempt(id, worker, channel, start, end, "HOLDING", held, outcome, outcome.name(), held));
      metrics.putIfAbsent(worker, new AgentMetrics(new HashMap<>(), new HashMap<>()));
      if (outcome == Outcome.BLOCKED) {
        metrics.get(worker).blocked().merge(History.agentChannel(channel), 1L, Long::sum);
      } else if (outcome == Outcome.REJECTED) {
        metrics.get(worker).rejected().merge(History.agentChannel(channel), 1L, Long::sum);
        if (channel.equals("http")) {
          fence.merge("http", 1L, Long::sum);
        }
      }
      return this;
    }

    H accepted(String resource, long order, String id, long token) {
      accepted.add(new Accepted(resource, order, id, token, 0));
      return this;
    }

    /** An attempt under section lock {@code lock} (several locks). */
    H attempt(String id, String lock, String channel, long start, long end, Outcome outcome) {
      attempt(id, channel, start, end, outcome);
      Attempt a = attempts.remove(attempts.size() - 1);
      attempts.add(new Attempt(a.writeId(), a.worker(), a.channel(), a.startMs(), a.endMs(), a.state(),
          a.tokenSeen(), a.outcome(), a.detail(), a.tokenHeld(), lock));
      return this;
    }

    /** Accepted under {@code lock}, in Kafka partition {@code partition} (-1: none). */
    H accepted(String resource, String lock, int partition, long order, String id, long token) {
      accepted.add(new Accepted(resource, order, id, token, 0, lock, partition));
      return this;
    }

    /** Arrived at unfenced destination {@code resource} ({@code pg-unfenced}, ...) in arrival order {@code order}. */
    H arrived(String resource, long order, String id, long token) {
      unfenced.add(new Accepted(resource, order, id, token, 0));
      return this;
    }

    /** An attempt whose ATTEMPT line showed its writer holding {@code token}. */
    H holding(String id, String channel, long start, long end, Outcome outcome, long token) {
      String worker = id.substring(0, id.indexOf(':'));
      attempts.add(new Attempt(id, worker, channel, start, end, "HOLDING", token, outcome, outcome.name(), token));
      metrics.putIfAbsent(worker, new AgentMetrics(new HashMap<>(), new HashMap<>()));
      if (outcome == Outcome.BLOCKED) {
        metrics.get(worker).blocked().merge(History.agentChannel(channel), 1L, Long::sum);
      }
      return this;
    }

    H quarantined(String id) {
      quarantined.add(id);
      fence.merge("kafka", 1L, Long::sum);
      return this;
    }

    HistoryChecker.Result check() {
      return HistoryChecker.check(new History(3, attempts, accepted, quarantined, metrics, fence, pgCounter,
          grants, unfenced, wipes));
    }
  }

  /** w1.1 holds token 5, w2.1 takes over with token 9; the stale w1.1 is rejected, blocked, quarantined. */
  private static H clean() {
    H h = new H();
    h.attempt("w1.1:1", "pg", 100, 110, Outcome.ACKED).accepted("pg", 1, "w1.1:1", 5);
    h.attempt("w1.1:1", "mariadb", 111, 115, Outcome.ACKED).accepted("mariadb", 1, "w1.1:1", 5);
    h.attempt("w1.1:1", "http", 116, 120, Outcome.ACKED).accepted("http", 1, "w1.1:1", 5);
    h.attempt("w1.1:1", "kafka", 121, 125, Outcome.ACKED).accepted("kafka", 1, "w1.1:1", 5);
    h.attempt("w2.1:1", "pg", 130, 140, Outcome.BLOCKED);
    h.attempt("w2.1:2", "pg", 3000, 3010, Outcome.ACKED).accepted("pg", 2, "w2.1:2", 9);
    h.attempt("w2.1:2", "http", 3011, 3020, Outcome.ACKED).accepted("http", 2, "w2.1:2", 9);
    h.attempt("w2.1:2", "kafka", 3021, 3030, Outcome.ACKED).accepted("kafka", 2, "w2.1:2", 9);
    h.attempt("w1.1:2", "pg", 3100, 3110, Outcome.REJECTED);
    h.attempt("w1.1:2", "mariadb", 3111, 3115, Outcome.FAILED); // fate open: not accepted, not lost
    h.attempt("w1.1:2", "http", 3116, 3120, Outcome.REJECTED);
    h.attempt("w1.1:2", "kafka", 3121, 3125, Outcome.ACKED).quarantined("w1.1:2");
    h.pgCounter = 2;
    return h;
  }

  @Test
  void aCleanHistoryPassesAndCountsBlockedAndRejected() {
    HistoryChecker.Result r = clean().check();
    assertThat(r.violations()).isEmpty();
    assertThat(r.summary()).isEqualTo("trials=3 stale_accepted=0 lost=0 blocked=1 rejected=3"
        + " unfenced_stale=0 unfenced_writes=0");
  }

  @Test
  void aLowerTokenCommittedAfterAHigherOneIsAStaleAccept() {
    H h = clean();
    h.attempt("w1.1:3", "mariadb", 2000, 2005, Outcome.FAILED).accepted("mariadb", 2, "w1.1:3", 9);
    h.attempt("w1.1:4", "mariadb", 2006, 2010, Outcome.ACKED).accepted("mariadb", 3, "w1.1:4", 5);
    HistoryChecker.Result r = h.check();
    assertThat(r.staleAccepted()).isEqualTo(1);
    assertThat(r.violations()).anyMatch(v -> v.startsWith("stale accept in mariadb: w1.1:4 with token 5 committed"));
    assertThat(r.ok()).isFalse();
  }

  @Test
  void aWriteAttemptedAfterAHigherTokenWasAcknowledgedMustNotBeAccepted() {
    // Commit order alone looks fine (the resource put it first), but real time says the higher token was acked
    // before the stale write was even attempted.
    H h = new H();
    h.attempt("w2.1:1", "http", 100, 110, Outcome.ACKED).accepted("http", 2, "w2.1:1", 9);
    h.attempt("w1.1:1", "http", 200, 210, Outcome.ACKED).accepted("http", 1, "w1.1:1", 5);
    HistoryChecker.Result r = h.check();
    assertThat(r.staleAccepted()).isEqualTo(1);
    assertThat(r.violations()).singleElement().asString()
        .contains("w1.1:1 with token 5 attempted at 200, after w2.1:1 with token 9 was acknowledged at 110");
  }

  @Test
  void bothRulesOnOneWriteCountOnce() {
    H h = new H();
    h.attempt("w2.1:1", "pg", 100, 110, Outcome.ACKED).accepted("pg", 1, "w2.1:1", 9);
    h.attempt("w1.1:1", "pg", 200, 210, Outcome.ACKED).accepted("pg", 2, "w1.1:1", 5);
    assertThat(h.check().staleAccepted()).isEqualTo(1);
  }

  @Test
  void anAcknowledgedWriteMissingFromItsResourceIsLost() {
    H h = clean();
    h.attempt("w2.1:3", "http", 3200, 3210, Outcome.ACKED);
    h.attempt("w2.1:3", "kafka", 3211, 3220, Outcome.ACKED); // neither consumed nor quarantined
    HistoryChecker.Result r = h.check();
    assertThat(r.lost()).isEqualTo(2);
    assertThat(r.violations()).anyMatch(v -> v.startsWith("lost: http write w2.1:3"))
        .anyMatch(v -> v.startsWith("lost: kafka write w2.1:3"));
  }

  @Test
  void aCounterOutOfStepWithTheRowsCountsAsLost() {
    H h = clean();
    h.pgCounter = 3;
    HistoryChecker.Result r = h.check();
    assertThat(r.lost()).isEqualTo(1);
    assertThat(r.violations()).singleElement().asString().startsWith("pg counter is 3 but 2 pg rows");
  }

  @Test
  void aBlockedWriteTheAgentDidNotCountIsAMissingMetric() {
    H h = clean();
    h.metrics.get("w2.1").blocked().clear();
    HistoryChecker.Result r = h.check();
    assertThat(r.summary()).endsWith("stale_accepted=0 lost=0 blocked=1 rejected=3 unfenced_stale=0"
        + " unfenced_writes=0");
    assertThat(r.ok()).isFalse();
    assertThat(r.violations()).singleElement().asString()
        .isEqualTo("missing metric: w2.1 saw 1 blocked jdbc writes, its agent counted"
            + " fencing_side_effects_total{channel=\"jdbc\",outcome=\"blocked\"} 0");
  }

  @Test
  void aRejectionMissingFromTheAgentsOrTheFencesCountersIsAMissingMetric() {
    H h = clean();
    h.metrics.get("w1.1").rejected().put("http", 0L);
    h.fence.put("kafka", 0L);
    HistoryChecker.Result r = h.check();
    assertThat(r.violations()).hasSize(2)
        .anyMatch(v -> v.startsWith("missing metric: w1.1 saw 1 rejected http writes"))
        .anyMatch(v -> v.startsWith("missing metric: the kafka fence rejected 1 writes"));
  }

  @Test
  void aWorkerWithoutScrapedMetricsIsAViolation() {
    H h = clean();
    h.metrics.remove("w1.1");
    assertThat(h.check().violations()).containsExactly("no metrics were scraped from w1.1's agent");
  }

  @Test
  void aWriteTheWorkerSawRejectedButTheResourceKeptIsAViolation() {
    H h = clean();
    h.accepted("http", 3, "w1.1:2", 9);
    HistoryChecker.Result r = h.check();
    assertThat(r.violations()).singleElement().asString()
        .startsWith("accepted in http although the worker saw it REJECTED: w1.1:2");
  }

  @Test
  void duplicatesAndWritesNobodyAttemptedAreViolations() {
    H h = clean();
    h.accepted("pg", 3, "w2.1:2", 9).accepted("pg", 4, "w9.1:1", 9);
    h.pgCounter = 4;
    assertThat(h.check().violations()).contains("accepted twice in pg: w2.1:2",
        "accepted in pg without any attempt: w9.1:1");
  }

  /**
   * Behind a transaction pooler: the stale w1.1 (token 5) runs its transaction on a backend whose session still
   * carries w2.1's pair (token 9). Tokens look in order and nothing was acked before with a higher token than 9,
   * so rules 1 and 2 see nothing; only the writer's own grants show that the fence judged the wrong token.
   */
  @Test
  void aWriteAcceptedUnderANewerTokenItsWriterNeverHeldIsAStaleAccept() {
    H h = new H();
    h.grants.put("w1.1", Set.of(5L));
    h.grants.put("w2.1", Set.of(9L));
    h.held = 9;
    h.attempt("w2.1:1", "pg", 100, 110, Outcome.ACKED).accepted("pg", 1, "w2.1:1", 9);
    h.held = 5;
    h.attempt("w1.1:1", "pg", 200, 210, Outcome.ACKED).accepted("pg", 2, "w1.1:1", 9);
    h.pgCounter = 2;
    HistoryChecker.Result r = h.check();
    assertThat(r.staleAccepted()).isEqualTo(1);
    assertThat(r.violations()).singleElement().asString()
        .startsWith("stale accept in pg: w1.1:1 accepted (order 2) with token 9, but its writer w1.1 held token 5"
            + " at most (its agent's grants: [5]");
  }

  @Test
  void aWriteAcceptedUnderAnOlderTokenItsWriterNeverHeldIsAViolationButNotStale() {
    H h = new H();
    h.grants.put("w1.1", Set.of(5L));
    h.grants.put("w2.1", Set.of(9L));
    h.held = 9;
    h.attempt("w2.1:1", "pg", 100, 110, Outcome.ACKED).accepted("pg", 1, "w2.1:1", 5); // met w1.1's session pair
    h.pgCounter = 1;
    HistoryChecker.Result r = h.check();
    assertThat(r.staleAccepted()).isZero();
    assertThat(r.ok()).isFalse();
    assertThat(r.violations()).singleElement().asString()
        .startsWith("foreign token in pg: w2.1:1 accepted (order 1) with token 5, which its writer w2.1 was never"
            + " granted");
  }

  @Test
  void aWriteUnderItsWritersOwnTokenPassesTheOwnTokenRule() {
    H h = clean();
    h.grants.put("w1.1", Set.of(5L));
    h.grants.put("w2.1", Set.of(9L));
    assertThat(h.check().violations()).isEmpty();
  }
  /**
   * Offsets order records only within a partition: a lower token at a later offset of another partition is no
   * violation (the consumer fence judged it before the higher one, in its poll order), the same within one is.
   */
  @Test
  void kafkaIsJudgedPerPartition() {
    H h = new H();
    h.attempt("w1.1:1", "kafka", 100, 110, Outcome.FAILED).accepted("kafka", "faults", 0, 1, "w1.1:1", 9);
    h.attempt("w2.1:1", "kafka", 100, 110, Outcome.FAILED).accepted("kafka", "faults", 1, 1, "w2.1:1", 5);
    h.attempt("w2.1:2", "kafka", 120, 130, Outcome.FAILED).accepted("kafka", "faults", 1, 2, "w2.1:2", 9);
    assertThat(h.check().violations()).isEmpty();

    h.attempt("w2.1:3", "kafka", 140, 150, Outcome.FAILED).accepted("kafka", "faults", 1, 3, "w2.1:3", 5);
    HistoryChecker.Result r = h.check();
    assertThat(r.staleAccepted()).isEqualTo(1);
    assertThat(r.violations()).singleElement().asString()
        .startsWith("stale accept in kafka/p1: w2.1:3 with token 5 committed (order 3) after w2.1:2 with token 9");
  }

  /** Rule 2 per partition: an ack in partition 0 says nothing about what partition 1 may take later. */
  @Test
  void theRealTimeRuleIsPerPartitionToo() {
    H h = new H();
    h.attempt("w2.1:1", "kafka", 100, 110, Outcome.ACKED).accepted("kafka", "faults", 0, 1, "w2.1:1", 9);
    h.attempt("w1.1:1", "kafka", 200, 210, Outcome.ACKED).accepted("kafka", "faults", 1, 1, "w1.1:1", 5);
    assertThat(h.check().violations()).isEmpty();
    // committed first in p0 (commit order looks fine), but attempted after the higher token's ack in p0
    h.attempt("w1.1:2", "kafka", 300, 310, Outcome.ACKED).accepted("kafka", "faults", 0, 0, "w1.1:2", 5);
    assertThat(h.check().violations()).singleElement().asString()
        .startsWith("stale accept in kafka/p0: w1.1:2 with token 5 attempted at 300, after w2.1:1 with token 9");
  }

  /**
   * Several locks: each (lock, resource) has its own token history. Lock faults-2's token 5 after lock faults-1's
   * token 9 in the same resource is in order; within faults-2, 5 after 7 is stale.
   */
  @Test
  void eachLockOfAResourceIsJudgedOnItsOwn() {
    H h = new H();
    h.attempt("w1.1:1/faults-1", "faults-1", "pg", 100, 110, Outcome.ACKED)
        .accepted("pg", "faults-1", -1, 1, "w1.1:1/faults-1", 9);
    h.attempt("w2.1:1/faults-2", "faults-2", "pg", 200, 210, Outcome.ACKED)
        .accepted("pg", "faults-2", -1, 1, "w2.1:1/faults-2", 5);
    h.pgCounter = 2;
    assertThat(h.check().violations()).isEmpty();

    h.attempt("w1.1:2/faults-2", "faults-2", "pg", 300, 310, Outcome.ACKED)
        .accepted("pg", "faults-2", -1, 2, "w1.1:2/faults-2", 7);
    h.attempt("w2.1:2/faults-2", "faults-2", "pg", 400, 410, Outcome.ACKED)
        .accepted("pg", "faults-2", -1, 3, "w2.1:2/faults-2", 5);
    h.pgCounter = 4;
    HistoryChecker.Result r = h.check();
    assertThat(r.staleAccepted()).isEqualTo(1);
    assertThat(r.violations()).allMatch(v -> v.startsWith("stale accept in pg/faults-2: w2.1:2/faults-2"))
        .hasSize(2); // commit order and real time, one write
  }

  /** The own-token rule per lock: a token the writer was granted for another lock is not its own for this one. */
  @Test
  void aTokenOfTheWritersOtherLockIsNotItsOwn() {
    H h = new H();
    h.grants.put("w1.1", Set.of(5L, 9L));
    h.grants.put("w1.1@faults-1", Set.of(9L));
    h.grants.put("w1.1@faults-2", Set.of(5L));
    h.held = 5;
    h.attempt("w1.1:1/faults-2", "faults-2", "http", 100, 110, Outcome.ACKED)
        .accepted("http", "faults-2", -1, 1, "w1.1:1/faults-2", 9);
    HistoryChecker.Result r = h.check();
    assertThat(r.staleAccepted()).isEqualTo(1);
    assertThat(r.violations()).singleElement().asString()
        .startsWith("stale accept in http/faults-2: w1.1:1/faults-2 accepted (order 1) with token 9, but its writer"
            + " w1.1 held token 5 at most (its agent's grants: [5]");
  }

  /** A write made in lock faults-1's section but recorded under faults-2 was judged against the wrong history. */
  @Test
  void aWriteAcceptedUnderAnotherLockThanItsSectionsIsAStaleAccept() {
    H h = new H();
    h.attempt("w1.1:1/faults-1", "faults-1", "kafka", 100, 110, Outcome.ACKED)
        .accepted("kafka", "faults-2", 0, 1, "w1.1:1/faults-1", 9);
    HistoryChecker.Result r = h.check();
    assertThat(r.staleAccepted()).isEqualTo(1);
    assertThat(r.violations()).singleElement().asString()
        .isEqualTo("wrong lock in kafka/faults-2/p0: w1.1:1/faults-1 was made under lock 'faults-1' but accepted"
            + " (order 1) under lock 'faults-2' with token 9");
  }

  /** The unfenced destinations: w1.1 holds token 5, w2.1 takes over with 9; w1.1's late writes are blocked. */
  private static H unfencedClean() {
    H h = new H();
    h.holding("w1.1:1", "pg-unfenced", 100, 110, Outcome.ACKED, 5).arrived("pg-unfenced", 1, "w1.1:1", 5);
    h.holding("w1.1:1", "http-unfenced", 111, 115, Outcome.ACKED, 5).arrived("http-unfenced", 1, "w1.1:1", 5);
    h.holding("w1.1:1", "kafka-unfenced", 116, 120, Outcome.ACKED, 5).arrived("kafka-unfenced", 1, "w1.1:1", 5);
    h.holding("w2.1:2", "pg-unfenced", 3000, 3010, Outcome.ACKED, 9).arrived("pg-unfenced", 2, "w2.1:2", 9);
    h.holding("w2.1:2", "http-unfenced", 3011, 3015, Outcome.ACKED, 9).arrived("http-unfenced", 2, "w2.1:2", 9);
    h.holding("w1.1:2", "pg-unfenced", 3100, 3110, Outcome.BLOCKED, 5);
    h.holding("w1.1:2", "kafka-unfenced", 3111, 3115, Outcome.BLOCKED, 5);
    return h;
  }

  @Test
  void unfencedArrivalsInHolderOrderPassAndAreCounted() {
    HistoryChecker.Result r = unfencedClean().check();
    assertThat(r.violations()).isEmpty();
    assertThat(r.summary()).isEqualTo("trials=3 stale_accepted=0 lost=0 blocked=2 rejected=0 unfenced_stale=0"
        + " unfenced_writes=5");
    assertThat(r.ok()).isTrue();
  }

  /** No fence orders an unfenced destination: a holder's write that arrives after its successor's first is stale. */
  @Test
  void aHoldersWriteArrivingAtAnUnfencedDestinationAfterItsSuccessorsFirstIsUnfencedStale() {
    H h = unfencedClean();
    h.holding("w1.1:3", "http-unfenced", 2990, 3500, Outcome.ACKED, 5).arrived("http-unfenced", 3, "w1.1:3", 5);
    HistoryChecker.Result r = h.check();
    assertThat(r.unfencedStale()).isEqualTo(1);
    assertThat(r.staleAccepted()).isZero();
    assertThat(r.ok()).isFalse();
    assertThat(r.summary()).contains(" unfenced_stale=1 unfenced_writes=6");
    assertThat(r.violations()).singleElement().asString().startsWith("unfenced stale write in http-unfenced: w1.1:3"
        + " with token 5 (attempted 2990-3500, outcome ACKED) arrived (order 3) after w2.1:2 with token 9 (order 2)");
  }

  /** The arrival order decides, not the attempt's times: a late commit (pg's arrival is its commit) is stale. */
  @Test
  void arrivalOrderIsWhatCountsNotWhenTheWriteBegan() {
    H h = unfencedClean();
    h.holding("w1.1:0", "pg-unfenced", 90, 3200, Outcome.FAILED, 5).arrived("pg-unfenced", 3, "w1.1:0", 5);
    HistoryChecker.Result r = h.check();
    assertThat(r.unfencedStale()).isEqualTo(1);
    assertThat(r.violations()).singleElement().asString().startsWith("unfenced stale write in pg-unfenced: w1.1:0");
  }

  /** Each unfenced destination is judged on its own: the successor's first pg write says nothing about Kafka. */
  @Test
  void eachUnfencedDestinationIsJudgedOnItsOwn() {
    H h = unfencedClean();
    h.holding("w1.1:3", "kafka-unfenced", 3200, 3210, Outcome.ACKED, 5).arrived("kafka-unfenced", 2, "w1.1:3", 5);
    assertThat(h.check().violations()).isEmpty();
  }

  @Test
  void anUntaggedWriteAtAnUnfencedDestinationIsAViolation() {
    H h = unfencedClean();
    h.holding("w3.1:1", "kafka-unfenced", 3200, 3210, Outcome.ACKED, 0).arrived("kafka-unfenced", 2, "w3.1:1", 0);
    HistoryChecker.Result r = h.check();
    assertThat(r.unfencedStale()).isEqualTo(1);
    assertThat(r.violations()).singleElement().asString().startsWith("untagged write in kafka-unfenced: w3.1:1");
  }

  /** Shared with the fenced resources: blocked yet arrived, and acknowledged yet missing. */
  @Test
  void aBlockedWriteThatArrivedAndAnAcknowledgedOneMissingAreViolations() {
    H h = unfencedClean();
    h.arrived("pg-unfenced", 3, "w1.1:2", 5);
    h.holding("w2.1:3", "http-unfenced", 3300, 3310, Outcome.ACKED, 9);
    HistoryChecker.Result r = h.check();
    assertThat(r.lost()).isEqualTo(1);
    assertThat(r.violations()).anyMatch(v -> v.startsWith("accepted in pg-unfenced although the worker saw it"
        + " BLOCKED: w1.1:2")).anyMatch(v -> v.startsWith("lost: http-unfenced write w2.1:3"));
  }

  /**
   * A coordinator wipe starts the tokens low again: a holder first seen after the wipe with token 3 comes after the
   * holder of token 9 from before it, and the old holder's write arriving after the new holder's first is stale.
   */
  @Test
  void afterACoordinatorWipeHoldersAreOrderedByTheHistoryTheirTokenCameFrom() {
    H h = unfencedClean();
    h.wipes.add(4000L);
    h.holding("w3.2:1", "pg-unfenced", 5000, 5010, Outcome.ACKED, 3).arrived("pg-unfenced", 3, "w3.2:1", 3);
    assertThat(h.check().violations()).isEmpty();
    h.holding("w2.1:9", "pg-unfenced", 3900, 5100, Outcome.ACKED, 9).arrived("pg-unfenced", 4, "w2.1:9", 9);
    HistoryChecker.Result r = h.check();
    assertThat(r.unfencedStale()).isEqualTo(1);
    assertThat(r.violations()).singleElement().asString().startsWith("unfenced stale write in pg-unfenced: w2.1:9")
        .endsWith("after w3.2:1 with token 3 (order 3), a holder after coordinator wipe 1");
  }

  /**
   * A worker granted token 3 again by the coordinator after a wipe: the write's ATTEMPT line showed another token, so
   * its token 3 is the new history's, not the one it held before the wipe.
   */
  @Test
  void aTokenNumberGrantedAgainAfterAWipeBelongsToTheNewHistory() {
    H h = new H();
    h.holding("w1.1:1", "http-unfenced", 100, 110, Outcome.ACKED, 3).arrived("http-unfenced", 1, "w1.1:1", 3);
    h.holding("w2.1:1", "http-unfenced", 200, 210, Outcome.ACKED, 16).arrived("http-unfenced", 2, "w2.1:1", 16);
    h.wipes.add(1000L);
    h.holding("w1.1:2", "http-unfenced", 2000, 2010, Outcome.ACKED, 13).arrived("http-unfenced", 3, "w1.1:2", 3);
    assertThat(h.check().violations()).isEmpty();
    // ...but a write whose ATTEMPT line showed the old token 3 is the old holder's.
    h.holding("w1.1:3", "http-unfenced", 2100, 2110, Outcome.ACKED, 3).arrived("http-unfenced", 4, "w1.1:3", 3);
    assertThat(h.check().violations()).singleElement().asString()
        .startsWith("unfenced stale write in http-unfenced: w1.1:3 with token 3");
  }

  @Test
  void theUnfencedChannelsAreCountedUnderTheAgentsChannels() {
    assertThat(History.agentChannel("pg-unfenced")).isEqualTo("jdbc");
    assertThat(History.agentChannel("http-unfenced")).isEqualTo("http");
    assertThat(History.agentChannel("kafka-unfenced")).isEqualTo("kafka");
    assertThat(History.agentChannel("mariadb")).isEqualTo("jdbc");
  }
}
