package dev.fencing.agent.instrumentation.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * Which grants a buffered batch is judged by; the policy's answer itself is a fake here (SideEffectPolicyTest,
 * ScopedGateTest). The fake holds a set of grants, one per lock, as a JVM with a JVM-wide lock, sections and captured
 * locks does; a batch is "any object", as ProducerBatch has identity equality.
 */
class BufferedBatchesTest {
  /** The grant each lock holds now; absent: none (its deadline passed). */
  private final Map<String, Decision> held = new ConcurrentHashMap<>();
  private final List<String> asked = new ArrayList<>();
  private final BufferedBatches batches = new BufferedBatches((taggedWith, count) -> {
    asked.add(taggedWith.lock() + ":" + taggedWith.token() + "x" + count);
    Decision now = held.get(taggedWith.lock());
    if (now == null) {
      return Decision.block(taggedWith.lock(), taggedWith.token(), BlockReason.EXPIRED);
    }
    return taggedWith.token() == now.token() ? null
        : Decision.block(taggedWith.lock(), taggedWith.token(), BlockReason.LOST);
  });

  private static Decision grant(String lock, long token) {
    return Decision.tag(lock, token, null, lock + "-lease" + token);
  }

  private Decision hold(String lock, long token) {
    Decision g = grant(lock, token);
    held.put(lock, g);
    return g;
  }

  private void send(Decision d, Object batch) {
    batches.sending(d);
    batches.appended(batch);
  }

  @Test
  void nothingIsHeldWhileEveryGrantOfABufferedBatchIsHeld() {
    assertThat(batches.mayBeHeld()).as("nothing buffered").isFalse();
    Decision g1 = hold("orders", 1);
    Object batch = new Object();
    send(g1, batch);
    send(g1, batch);
    assertThat(batches.mayBeHeld()).isFalse();
    assertThat(batches.check(batch, 2, true)).isNull();
    held.clear();
    assertThat(batches.mayBeHeld()).isTrue();
    assertThat(batches.check(batch, 2, true).token()).isEqualTo(1);
    assertThat(asked).endsWith("orders:1x2");
    batches.done(batch);
    assertThat(batches.mayBeHeld()).as("the batch ended: nothing buffered").isFalse();
    assertThat(batches.noted()).isZero();
  }

  /**
   * Three grants valid at once (a JVM-wide lock and two sections): the batch of the one that expired is held, whatever
   * the order of the sends; the others leave. Two slots for the whole JVM judged the first lock's batch by the
   * second's.
   */
  @Test
  void eachBatchIsJudgedByTheGrantsItsRecordsWereTaggedUnder() {
    Decision a = hold("ledger-a", 5);
    Decision b = hold("ledger-b", 9);
    Decision jvm = hold("orders", 2);
    Object batchA = new Object();
    Object batchB = new Object();
    Object batchJvm = new Object();
    send(a, batchA);
    send(b, batchB);
    send(jvm, batchJvm);
    send(a, batchA);
    assertThat(batches.mayBeHeld()).isFalse();

    held.remove("ledger-a");
    assertThat(batches.mayBeHeld()).isTrue();
    assertThat(batches.check(batchA, 2, true)).extracting(Decision::lock, Decision::token)
        .containsExactly("ledger-a", 5L);
    assertThat(batches.check(batchB, 1, true)).isNull();
    assertThat(batches.check(batchJvm, 1, true)).isNull();

    batches.done(batchA);
    assertThat(batches.mayBeHeld()).as("no buffered batch holds records of the expired grant").isFalse();
  }

  @Test
  void aBatchHoldingRecordsOfTwoGrantsLeavesOnlyWhileBothAreHeld() {
    Decision a = hold("ledger-a", 5);
    Decision jvm = hold("orders", 2);
    Object shared = new Object(); // one producer, one partition: both locks' records in one batch
    send(a, shared);
    send(jvm, shared);
    send(a, shared);
    send(jvm, shared);
    assertThat(batches.check(shared, 4, false)).isNull();
    held.remove("orders");
    assertThat(batches.check(shared, 4, true)).extracting(Decision::lock).isEqualTo("orders");
    assertThat(asked).endsWith("ledger-a:5x4", "orders:2x4");
  }

  @Test
  void recordsOfAnEarlierGrantOfTheSameLockNeverLeaveUnderTheNextOne() {
    Decision g1 = hold("orders", 1);
    Object early = new Object();
    send(g1, early);
    Decision g2 = hold("orders", 3); // lost and won again: a later grant, a higher token
    Object late = new Object();
    send(g2, late);
    assertThat(batches.mayBeHeld()).isTrue();
    assertThat(batches.check(early, 1, true)).extracting(Decision::token, Decision::reason)
        .containsExactly(1L, BlockReason.LOST);
    assertThat(batches.check(late, 1, true)).isNull();
  }

  /**
   * A record that waited in send() (metadata, buffer memory) across a loss and the next grant joins a batch made
   * under the next grant: it is judged by the grant its send was tagged with, which the wall clock could not tell.
   */
  @Test
  void aRecordIsAttributedByItsSendNotByWhenItsBatchWasMade() {
    Decision g1 = hold("orders", 1);
    Object batch = new Object();
    batches.sending(g1); // send() decided under g1, then waited
    hold("orders", 3);
    batches.appended(batch); // and joined a batch made under g3
    assertThat(batches.check(batch, 1, false)).extracting(Decision::token).isEqualTo(1L);
  }

  /**
   * Each thread remembers the batch and decision it noted last: another thread's record in that batch, a record of
   * another grant after it, and the thread's return to an earlier batch are each still noted.
   */
  @Test
  void whatAThreadNotedLastHidesNoOtherGrant() throws Exception {
    Decision jvm = hold("orders", 2);
    Decision section = hold("ledger", 7);
    Object first = new Object();
    Object second = new Object();
    send(jvm, first);
    Thread other = new Thread(() -> send(section, first)); // another thread's record joins the same batch
    other.start();
    other.join();
    send(jvm, first);
    send(jvm, second);
    Decision later = hold("orders", 4); // lost and won again, between two records of this thread to one batch
    send(later, second);
    send(jvm, first);

    held.put("orders", jvm);
    held.remove("ledger");
    assertThat(batches.check(first, 4, false)).as("the other thread's record in the batch")
        .extracting(Decision::lock).isEqualTo("ledger");
    assertThat(batches.check(second, 2, false)).as("the later grant's record after this thread's first")
        .extracting(Decision::token, Decision::reason).containsExactly(4L, BlockReason.LOST);
    held.put("orders", later);
    assertThat(batches.check(second, 2, false)).extracting(Decision::token, Decision::reason)
        .containsExactly(2L, BlockReason.LOST);
  }

  @Test
  void untaggedRecordsAreNotJudgedAgain() {
    Object batch = new Object();
    send(null, batch); // an exempt caller's record, or one sent with nothing to tag it with
    held.clear();
    assertThat(batches.check(batch, 1, true)).isNull();
    assertThat(batches.mayBeHeld()).isFalse();
    assertThat(batches.noted()).isZero();
  }

  @Test
  void theSteadyStateNotesABatchOnceAndAsksNothingPerRecord() {
    Decision g1 = hold("orders", 1);
    Decision sameGrant = grant("orders", 1); // another decision object for the same grant
    held.put("orders", g1);
    Object batch = new Object();
    for (int i = 0; i < 1_000; i++) {
      send(i % 100 == 0 ? sameGrant : g1, batch);
    }
    assertThat(batches.noted()).isEqualTo(1);
    assertThat(asked).isEmpty();
    assertThat(batches.mayBeHeld()).isFalse();
    assertThat(asked).containsExactly("orders:1x0");
  }

  @Test
  void theNotesOfASplitBatchGoToItsParts() {
    Decision g1 = hold("orders", 1);
    Object big = new Object();
    send(g1, big);
    Object part1 = new Object();
    Object part2 = new Object();
    batches.split(big, List.of(part1, part2));
    held.clear();
    assertThat(batches.check(part1, 1, false)).isNotNull();
    assertThat(batches.check(part2, 1, false)).isNotNull();
    assertThat(batches.check(big, 1, false)).as("the split batch holds nothing any more").isNull();
    batches.done(part1);
    assertThat(batches.mayBeHeld()).isTrue();
    batches.done(part2);
    assertThat(batches.mayBeHeld()).isFalse();
  }

  @Test
  void onlyADeliveryTimeoutSweepExpiresAHeldBatchAndKafkaFailsItWithTheDecisionOnce() {
    Decision g1 = hold("orders", 1);
    Object batch = new Object();
    send(g1, batch);
    held.clear();
    assertThat(batches.expireHeld(batch, 2)).as("outside a sweep: a batch in flight").isNull();
    batches.sweep(true);
    Decision d = batches.expireHeld(batch, 2);
    batches.sweep(false);
    assertThat(d).isNotNull();
    assertThat(batches.expiredHeld(new Object())).isNull();
    assertThat(batches.expiredHeld(batch)).isSameAs(d);
    assertThat(batches.expiredHeld(batch)).isNull();
    assertThat(asked).endsWith("orders:1x2");
  }
}
