package dev.fencing.agent.instrumentation.api;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import java.util.concurrent.atomic.LongAdder;

/**
 * Side effects by channel, fenced-ness, outcome and, for blocked (and would-be blocked) ones, the block reason: the
 * source of fencing_side_effects_total and fencing_side_effects_blocked_total. Plain adders indexed by ordinal, so counting on the hot path takes no lock and
 * allocates nothing.
 */
public final class SideEffectCounters {
  /** The {@code outcome} label. */
  public enum Outcome {
    TAGGED("tagged"),
    BLOCKED("blocked"),
    /** Sent untagged: fail-mode open, or observe mode with no token to carry. */
    PASSED("passed"),
    /** Observe mode let through what enforce mode would have blocked (tagged with the last token when there is one). */
    WOULD_BLOCK("would_block"),
    /**
     * Sent untagged because it is no lock-protected side effect (fencing.exempt.*): an exempt destination, or, where it
     * would have been blocked, an exempt caller (a schema migration, a telemetry exporter).
     */
    EXEMPT("exempt");

    private final String label;

    Outcome(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  /** Cached: values() clones its array on every call, which the hot path must not pay for. */
  private static final int REASONS = BlockReason.values().length;
  /** Per (channel, fenced): tagged, passed, exempt, then blocked and would_block by reason. */
  private static final int SLOTS = 3 + 2 * REASONS;

  private final LongAdder[] adders = new LongAdder[Channel.values().length * 2 * SLOTS];
  /** fencing_hook_failures_total, by channel. */
  private final LongAdder[] hookFailures = new LongAdder[Channel.values().length];

  public SideEffectCounters() {
    for (int i = 0; i < adders.length; i++) {
      adders[i] = new LongAdder();
    }
    for (int i = 0; i < hookFailures.length; i++) {
      hookFailures[i] = new LongAdder();
    }
  }

  /**
   * The adder of one label combination. {@code reason} is ignored for tagged and passed; a blocked outcome without a
   * reason (no decision makes one) is counted under {@link BlockReason#HOOK_FAILED}, so it is still counted.
   */
  private static int index(Channel channel, boolean fenced, Outcome outcome, BlockReason reason) {
    int base = (channel.ordinal() * 2 + (fenced ? 1 : 0)) * SLOTS;
    int r = reason == null ? BlockReason.HOOK_FAILED.ordinal() : reason.ordinal();
    switch (outcome) {
      case TAGGED:
        return base;
      case PASSED:
        return base + 1;
      case EXEMPT:
        return base + 2;
      case BLOCKED:
        return base + 3 + r;
      default:
        return base + 3 + REASONS + r;
    }
  }

  /** Whether the outcome carries a block reason (blocked, would_block). */
  public static boolean hasReason(Outcome outcome) {
    return outcome == Outcome.BLOCKED || outcome == Outcome.WOULD_BLOCK;
  }

  public static Outcome outcomeOf(Decision d) {
    if (d.observed()) {
      return Outcome.WOULD_BLOCK;
    }
    switch (d.kind()) {
      case TAG:
        return Outcome.TAGGED;
      case BLOCK:
        return Outcome.BLOCKED;
      default:
        return Outcome.PASSED;
    }
  }

  /** The policy's count of a decision it took; lock-free, allocation-free. */
  public void record(Channel channel, boolean fenced, Decision d) {
    adders[index(channel, fenced, outcomeOf(d), d.reason())].increment();
  }

  /** A side effect passed as exempt (fencing.exempt.*); lock-free, allocation-free. */
  public void recordExempt(Channel channel, boolean fenced) {
    adders[index(channel, fenced, Outcome.EXEMPT, null)].increment();
  }


  /** All side effects of this outcome, whatever the reason. */
  public long count(Channel channel, boolean fenced, Outcome outcome) {
    if (!hasReason(outcome)) {
      return adders[index(channel, fenced, outcome, null)].sum();
    }
    long n = 0;
    for (BlockReason r : BlockReason.values()) {
      n += adders[index(channel, fenced, outcome, r)].sum();
    }
    return n;
  }

  /** Blocked or would-be-blocked side effects for {@code reason}; for tagged and passed, the reason is ignored. */
  public long count(Channel channel, boolean fenced, Outcome outcome, BlockReason reason) {
    return adders[index(channel, fenced, outcome, reason)].sum();
  }

  /** The policy's count of a hook that failed for one call. */
  public void recordHookFailure(Channel channel) {
    hookFailures[channel.ordinal()].increment();
  }

  public long hookFailures(Channel channel) {
    return hookFailures[channel.ordinal()].sum();
  }
}
