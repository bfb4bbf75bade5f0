package dev.fencing.agent.instrumentation.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.instrumentation.api.SideEffectEvents;
import dev.fencing.agent.policy.SideEffectPolicy;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LossReason;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenStateFixtures;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A send to an unfenced topic also notes the grant it was tagged under on the batch its record joins, and the
 * producer's I/O thread asks each turn whether anything buffered may have to be held: neither allocates, and the
 * answer follows the real policy.
 */
class KafkaFencingHotPathTest {
  private final TokenState state = TokenStateFixtures.onClock("hot", Long.MAX_VALUE, System::nanoTime);

  @AfterEach
  void uninstall() {
    Fencing.install(null);
  }

  @Test
  void taggingAndTheDrainCheckAllocateNothingAndFollowTheLease() {
    Grant g = state.granted(42, 1, 1, System.nanoTime() + 60_000_000_000L);
    AgentConfig config = ConfigLoader.load("lock=hot", new Properties(), Map.of());
    Fencing.install(new SideEffectPolicy(config, state, new SideEffectCounters(), SideEffectEvents.NONE));
    KafkaFencing kafka = new KafkaFencing(List.of("ledger-*"));
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().getId();
    Decision last = null;
    boolean held = true;
    Object[] batches = {new Object(), new Object()}; // one per topic, as a producer's partitions have
    for (int i = 0; i < 200_000; i++) {
      last = kafka.decide((i & 1) == 0 ? "orders" : "ledger-events");
      kafka.appended(batches[i & 1]);
      held = kafka.bufferedMayBeHeld();
    }
    long before = threads.getThreadAllocatedBytes(id);
    for (int i = 0; i < 1_000_000; i++) {
      last = kafka.decide((i & 1) == 0 ? "orders" : "ledger-events");
      kafka.appended(batches[i & 1]);
      held = kafka.bufferedMayBeHeld();
    }
    long allocated = threads.getThreadAllocatedBytes(id) - before;
    assertThat(last.isTag()).isTrue();
    assertThat(held).as("one grant, still held: nothing buffered to hold").isFalse();
    assertThat(allocated).as("bytes allocated by 1,000,000 sends and drain checks").isLessThan(64 * 1024);

    state.lost(g, LossReason.KEY_DELETED);
    assertThat(kafka.bufferedMayBeHeld()).as("a buffered batch holds records of the lost grant").isTrue();
    kafka.batchDone(batches[0]);
    kafka.batchDone(batches[1]);
    assertThat(kafka.bufferedMayBeHeld()).as("nothing buffered any more").isFalse();
  }
}
