package dev.fencing.agent.instrumentation.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Which grant a buffered batch is judged by; the policy's answer itself is a fake here (SideEffectPolicyTest). */
class BufferedBatchesTest {
  private final AtomicLong clockMs = new AtomicLong(10_000);
  /** The grant the fake policy holds now; null: none (the deadline passed). */
  private final AtomicReference<Decision> held = new AtomicReference<>();
  private final List<String> asked = new ArrayList<>();
  private final BufferedBatches batches = new BufferedBatches((taggedWith, count) -> {
    asked.add((taggedWith == null ? "none" : Long.toString(taggedWith.token())) + "x" + count);
    Decision now = held.get();
    if (now == null) {
      return Decision.block("orders", 0, BlockReason.EXPIRED);
    }
    return taggedWith == null || taggedWith == now ? null : Decision.block("orders", taggedWith.token(),
        BlockReason.LOST);
  }, clockMs::get);

  private static Decision grant(long token) {
    return Decision.tag("orders", token, null, "lease" + token);
  }

  @Test
  void nothingIsHeldWhileTheOnlyGrantIsHeld() {
    assertThat(batches.mayBeHeld()).as("nothing tagged yet").isFalse();
    Decision g1 = grant(1);
    held.set(g1);
    batches.tagged(g1);
    assertThat(batches.mayBeHeld()).isFalse();
    assertThat(batches.check(9_000, 3, true)).isNull();
    held.set(null);
    assertThat(batches.mayBeHeld()).isTrue();
    assertThat(batches.check(12_000, 3, true)).isNotNull();
    assertThat(asked).endsWith("1x3");
  }

  @Test
  void aBatchCreatedBeforeTheCurrentGrantWasFirstUsedIsJudgedByTheGrantBefore() {
    Decision g1 = grant(1);
    Decision g2 = grant(2);
    held.set(g1);
    batches.tagged(g1); // at 10 000
    clockMs.set(20_000);
    held.set(g2);
    batches.tagged(g2); // first record under g2 at 20 000
    assertThat(batches.mayBeHeld()).as("batches of g1 may still wait").isTrue();
    Decision d = batches.check(15_000, 4, true);
    assertThat(d).isNotNull();
    assertThat(d.token()).isEqualTo(1);
    assertThat(batches.check(19_999, 1, false)).as("created just before: may hold g1 records").isNotNull();
    assertThat(batches.check(20_000, 1, true))
        .as("created in the same millisecond: the batch the first g2 record created").isNull();
    assertThat(batches.check(20_001, 2, true)).as("created after: g2 records only").isNull();
    assertThat(asked).containsExactly("1x4", "1x0", "2x1", "2x2");
  }

  @Test
  void taggingUnderTheSameGrantKeepsItsStartTime() {
    Decision g1 = grant(1);
    held.set(g1);
    batches.tagged(g1);
    clockMs.set(50_000);
    batches.tagged(g1);
    batches.tagged(grant(1)); // another decision object for the same grant
    assertThat(batches.check(10_001, 1, false)).isNull();
    assertThat(asked).containsExactly("1x0");
  }

  @Test
  void onlyADeliveryTimeoutSweepExpiresAHeldBatchAndKafkaFailsItWithTheDecisionOnce() {
    Decision g1 = grant(1);
    batches.tagged(g1);
    held.set(null);
    Object batch = new Object();
    assertThat(batches.expireHeld(batch, 9_000, 2)).as("outside a sweep: a batch in flight").isNull();
    batches.sweep(true);
    Decision d = batches.expireHeld(batch, 9_000, 2);
    batches.sweep(false);
    assertThat(d).isNotNull();
    assertThat(batches.expiredHeld(new Object())).isNull();
    assertThat(batches.expiredHeld(batch)).isSameAs(d);
    assertThat(batches.expiredHeld(batch)).isNull();
    assertThat(asked).endsWith("1x2");
  }
}
