package dev.fencing.agent.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenStateFixtures;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/** The hot path (holding, tagging) takes no lock and allocates nothing: measured with the JVM's allocation counter. */
class HotPathAllocationTest {
  @Test
  void taggingDecisionsAllocateNothing() {
    TokenState state = TokenStateFixtures.onClock("hot", Long.MAX_VALUE, System::nanoTime);
    state.granted(42, 1, 1, System.nanoTime() + 60_000_000_000L);
    SideEffectPolicy policy = new SideEffectPolicy(state, new SideEffectCounters(), false, false, true, false, 0);
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().getId();
    Decision last = null;
    for (int i = 0; i < 200_000; i++) { // warm up: per-grant decisions, counter cells, JIT
      last = policy.decide(Channel.JDBC, (i & 1) == 0, (i & 2) == 0);
    }
    long before = threads.getThreadAllocatedBytes(id);
    for (int i = 0; i < 1_000_000; i++) {
      last = policy.decide(Channel.JDBC, (i & 1) == 0, (i & 2) == 0);
    }
    long allocated = threads.getThreadAllocatedBytes(id) - before;
    assertThat(last.isTag()).isTrue();
    // A single allocation per call would be >= 16 MB here; allow for the measurement's own noise.
    assertThat(allocated).as("bytes allocated by 1,000,000 decisions").isLessThan(64 * 1024);
  }
}
