package dev.fencing.agent.policy;

import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenStateFixtures;
import dev.fencing.protocol.TokenSignature;
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

  @Test
  void signedTokensAreSignedOncePerGrantAndTaggingStillAllocatesNothing() {
    byte[] key = new byte[32];
    key[5] = 9;
    TokenSignature signer = TokenSignature.of(key);
    TokenState state = TokenStateFixtures.signed("hot", Long.MAX_VALUE, System::nanoTime, signer);
    state.granted(42, 1, 1, System.nanoTime() + 60_000_000_000L);
    SideEffectPolicy policy = new SideEffectPolicy(state, new SideEffectCounters(), false, false, true, false, 0);
    Decision first = policy.decide(Channel.HTTP, true, true);
    assertThat(first.signature()).isEqualTo(signer.sign("hot", 42));
    assertThat(signer.verify("hot", 42, first.signature())).isTrue();
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().getId();
    for (int i = 0; i < 200_000; i++) {
      policy.decide(Channel.HTTP, (i & 1) == 0, (i & 2) == 0);
    }
    long before = threads.getThreadAllocatedBytes(id);
    Decision last = null;
    for (int i = 0; i < 1_000_000; i++) {
      last = policy.decide(Channel.HTTP, true, (i & 2) == 0);
    }
    long allocated = threads.getThreadAllocatedBytes(id) - before;
    assertThat(last.signature()).as("the same prebuilt signature, not a new one per call").isSameAs(first.signature());
    assertThat(allocated).as("bytes allocated by 1,000,000 signed decisions").isLessThan(64 * 1024);

    state.granted(43, 2, 1, System.nanoTime() + 60_000_000_000L);
    Decision next = policy.decide(Channel.HTTP, true, true);
    assertThat(next.token()).isEqualTo(43);
    assertThat(next.signature()).isEqualTo(signer.sign("hot", 43)).isNotEqualTo(first.signature());
  }

  @Test
  void withoutAKeyNothingIsSigned() {
    TokenState state = TokenStateFixtures.onClock("hot", Long.MAX_VALUE, System::nanoTime);
    state.granted(42, 1, 1, System.nanoTime() + 60_000_000_000L);
    SideEffectPolicy policy = new SideEffectPolicy(state, new SideEffectCounters(), false, false, true, false, 0);
    assertThat(policy.decide(Channel.KAFKA, true, true).signature()).isNull();
  }
}
