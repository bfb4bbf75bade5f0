package dev.fencing.agent.policy;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import java.util.concurrent.atomic.LongAdder;

/**
 * Side effects by channel, fenced-ness and outcome: the source of fencing_side_effects_total. Plain adders indexed by
 * ordinal, so counting on the hot path takes no lock and allocates nothing.
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
  private static final int OUTCOMES = Outcome.values().length;

  private final LongAdder[] adders = new LongAdder[Channel.values().length * 2 * OUTCOMES];
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

  private static int index(Channel channel, boolean fenced, Outcome outcome) {
    return (channel.ordinal() * 2 + (fenced ? 1 : 0)) * OUTCOMES + outcome.ordinal();
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

  void record(Channel channel, boolean fenced, Decision d) {
    adders[index(channel, fenced, outcomeOf(d))].increment();
  }

  /** A side effect passed as exempt (fencing.exempt.*); lock-free, allocation-free. */
  public void recordExempt(Channel channel, boolean fenced) {
    adders[index(channel, fenced, Outcome.EXEMPT)].increment();
  }

  public long count(Channel channel, boolean fenced, Outcome outcome) {
    return adders[index(channel, fenced, outcome)].sum();
  }

  void recordHookFailure(Channel channel) {
    hookFailures[channel.ordinal()].increment();
  }

  public long hookFailures(Channel channel) {
    return hookFailures[channel.ordinal()].sum();
  }
}
