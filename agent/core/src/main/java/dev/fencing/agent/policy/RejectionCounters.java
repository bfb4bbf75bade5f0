package dev.fencing.agent.policy;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.protocol.Rejection;
import java.util.concurrent.atomic.LongAdder;

/** Stale writes rejected by fences, as the agent sees the rejections come back: fencing_rejections_total. */
public final class RejectionCounters {
  /** The {@code reason} label: the fences' own labels ({@link Rejection#label()}). */
  public enum Reason {
    STALE_TOKEN(Rejection.STALE_TOKEN.label()),
    MISSING_TOKEN(Rejection.MISSING_TOKEN.label()),
    /**
     * The fence holds this token under another grant (HTTP 409 {@code Fencing-Rejected: replayed-token}): a restored
     * coordinator reissued the token to a second holder.
     */
    REPLAYED_TOKEN(Rejection.REPLAYED_TOKEN.label());

    private final String label;

    Reason(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  /** Cached: values() clones its array on every call. */
  private static final int REASONS = Reason.values().length;

  private final LongAdder[] adders = new LongAdder[Channel.values().length * REASONS];

  private final SideEffectEvents events;

  public RejectionCounters() {
    this(SideEffectEvents.NONE);
  }

  /** Each recorded rejection is also reported to {@code events} (a log line). */
  public RejectionCounters(SideEffectEvents events) {
    this.events = events;
    for (int i = 0; i < adders.length; i++) {
      adders[i] = new LongAdder();
    }
  }

  public void record(Channel channel, Reason reason) {
    adders[channel.ordinal() * REASONS + reason.ordinal()].increment();
    events.rejected(channel, reason);
  }

  public long count(Channel channel, Reason reason) {
    return adders[channel.ordinal() * REASONS + reason.ordinal()].sum();
  }
}
