package dev.fencing.agent.policy;

import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.instrumentation.api.SideEffectEvents;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.exempt.CallerExemptions;
import dev.fencing.agent.exempt.fixture.Migrator;
import dev.fencing.agent.instrumentation.api.SideEffectCounters.Outcome;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenStateFixtures;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * fencing.exempt.callers in the policy: a write that would be blocked passes untagged when exempt code is on the
 * stack (a migration on a standby), counted as exempt; the tagging path is left as it is.
 */
class CallerExemptionPolicyTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private final AtomicLong clock = new AtomicLong(1_000 * SECOND);
  private final TokenState state = TokenStateFixtures.onClock("ledger", 1000, clock::get);
  private final SideEffectCounters counters = new SideEffectCounters();
  private final CallerExemptions callers = new CallerExemptions(List.of("dev.fencing.agent.exempt.fixture."));

  private SideEffectPolicy policy(boolean observe, boolean standbyWait) {
    return new SideEffectPolicy(state, counters, SideEffectEvents.NONE, observe, false, true, standbyWait,
        TimeUnit.SECONDS.toNanos(5), false, callers);
  }

  @Test
  void onAStandbyAnExemptCallersWritePassesUntaggedAndCountsAsExemptWhileOthersAreBlocked() {
    state.standby("campaigning");
    SideEffectPolicy p = policy(false, false);

    Decision exempt = Migrator.run(() -> p.decide(Channel.JDBC, true, false));
    Decision other = p.decide(Channel.JDBC, true, false);

    assertThat(exempt.kind()).isEqualTo(Decision.Kind.PASS);
    assertThat(exempt.reason()).isNull();
    assertThat(other.isBlock()).isTrue();
    assertThat(other.reason()).isEqualTo(BlockReason.STANDBY);
    assertThat(counters.count(Channel.JDBC, false, Outcome.EXEMPT)).isEqualTo(1);
    assertThat(counters.count(Channel.JDBC, false, Outcome.BLOCKED)).isEqualTo(1);
  }

  @Test
  void aCommitCheckedFromAnExemptCallerPasses() {
    state.standby("campaigning");
    SideEffectPolicy p = policy(false, false);

    assertThat(Migrator.run(() -> p.checkNow(Channel.JDBC, false)).isBlock()).isFalse();
    assertThat(p.checkNow(Channel.JDBC, false).isBlock()).isTrue();
    assertThat(counters.count(Channel.JDBC, false, Outcome.EXEMPT)).isEqualTo(1);
  }

  @Test
  void whileHoldingAnExemptCallersWriteIsTaggedAsAnyOther() {
    state.granted(42, 7, 0xC1, clock.get() + 10 * SECOND);
    SideEffectPolicy p = policy(false, false);

    Decision d = Migrator.run(() -> p.decide(Channel.JDBC, true, false));

    assertThat(d.isTag()).isTrue();
    assertThat(d.token()).isEqualTo(42);
    assertThat(counters.count(Channel.JDBC, false, Outcome.TAGGED)).isEqualTo(1);
    assertThat(counters.count(Channel.JDBC, false, Outcome.EXEMPT)).isZero();
  }

  @Test
  void withStandbyWaitAnExemptCallerDoesNotWaitForTheLease() {
    state.standby("campaigning");
    SideEffectPolicy p = policy(false, true);
    long start = System.nanoTime();

    Decision d = Migrator.run(() -> p.decide(Channel.HTTP, true, false));

    assertThat(d.kind()).isEqualTo(Decision.Kind.PASS);
    assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(2));
  }

  @Test
  void inObserveModeAnExemptCallerIsCountedExemptNotWouldBlock() {
    state.standby("campaigning");
    SideEffectPolicy p = policy(true, false);

    Decision d = Migrator.run(() -> p.decide(Channel.KAFKA, true, false));

    assertThat(d.kind()).isEqualTo(Decision.Kind.PASS);
    assertThat(d.reason()).isNull();
    assertThat(counters.count(Channel.KAFKA, false, Outcome.EXEMPT)).isEqualTo(1);
    assertThat(counters.count(Channel.KAFKA, false, Outcome.WOULD_BLOCK)).isZero();
  }
}
