package dev.fencing.agent.events;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class FencingEventsTest {
  private static final long SECOND = 1_000_000_000L;
  private final AtomicLong clock = new AtomicLong();
  private final List<String> lines = new ArrayList<>();
  private final FencingEvents events = new FencingEvents("ledger", 10 * SECOND, clock::get, lines::add);

  @Test
  void oneLinePerChannelAndReasonPerPeriodCountingTheRest() {
    Decision expired = Decision.block("ledger", 7, BlockReason.EXPIRED);
    events.blocked(Channel.HTTP, false, expired);
    events.blocked(Channel.HTTP, false, expired);
    events.blocked(Channel.HTTP, true, expired); // same channel and reason: one kind of event
    events.blocked(Channel.JDBC, false, expired);
    events.blocked(Channel.HTTP, false, Decision.block("ledger", 7, BlockReason.LOST));
    events.blocked(Channel.HTTP, false, Decision.observedBlock("ledger", 7, BlockReason.EXPIRED));
    assertThat(lines).containsExactly(
        "blocked a http side effect to an unfenced destination: lock 'ledger', token 7, reason expired"
            + " (the lease expired (local deadline passed))",
        "blocked a jdbc side effect to an unfenced destination: lock 'ledger', token 7, reason expired"
            + " (the lease expired (local deadline passed))",
        "blocked a http side effect to an unfenced destination: lock 'ledger', token 7, reason lost (the lease was lost)",
        "observe mode: would have blocked a http side effect to an unfenced destination: lock 'ledger', token 7,"
            + " reason expired (the lease expired (local deadline passed))");
    lines.clear();
    clock.addAndGet(10 * SECOND);
    events.blocked(Channel.HTTP, true, expired);
    assertThat(lines).containsExactly("blocked a http side effect to a fenced destination: lock 'ledger', token 7,"
        + " reason expired (the lease expired (local deadline passed)) [2 more like it since the last such line]");
  }

  @Test
  void rejectionsAreRateLimitedApartFromBlocks() {
    events.rejected(Channel.JDBC, RejectionCounters.Reason.STALE_TOKEN);
    events.rejected(Channel.JDBC, RejectionCounters.Reason.STALE_TOKEN);
    events.rejected(Channel.JDBC, RejectionCounters.Reason.MISSING_TOKEN);
    events.blocked(Channel.JDBC, false, Decision.block("ledger", 0, BlockReason.STANDBY));
    assertThat(lines).containsExactly(
        "a fence rejected a jdbc side effect of lock 'ledger': reason stale_token"
            + " (a newer holder has written: this JVM's lease is gone)",
        "a fence rejected a jdbc side effect of lock 'ledger': reason missing_token"
            + " (the side effect reached a fenced resource without a token)",
        "blocked a jdbc side effect to an unfenced destination: lock 'ledger', token none, reason standby"
            + " (this process has not acquired the lease)");
  }

  @Test
  void decisionsWithoutAReasonAreNoEvents() {
    events.blocked(Channel.KAFKA, false, Decision.tag("ledger", 3));
    assertThat(lines).isEmpty();
  }

  @Test
  void hookFailuresAreOneLinePerChannelAndPeriod() {
    Decision blocked = Decision.block("ledger", 7, BlockReason.HOOK_FAILED);
    events.hookFailed(Channel.JDBC, new IllegalStateException("driver bug"), blocked);
    events.hookFailed(Channel.JDBC, new NoClassDefFoundError("com/x/Y"), blocked);
    events.hookFailed(Channel.HTTP, new IllegalStateException("oops"), Decision.pass("ledger"));
    clock.addAndGet(10 * SECOND);
    events.hookFailed(Channel.JDBC, new NoClassDefFoundError("com/x/Y"), blocked);
    assertThat(lines).containsExactly(
        "the jdbc hook failed; the call was blocked (fencing.fail-mode=closed): IllegalStateException driver bug",
        "the http hook failed; the call went on untagged: IllegalStateException oops",
        "the jdbc hook failed; the call was blocked (fencing.fail-mode=closed): NoClassDefFoundError com/x/Y"
            + " [1 more like it since the last such line]");
  }
}
