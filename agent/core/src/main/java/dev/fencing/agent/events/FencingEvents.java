package dev.fencing.agent.events;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import dev.fencing.agent.instrumentation.api.SideEffectEvents;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * What an operator should hear about one side effect: it was blocked (or, in observe mode, would have been), or a
 * fence rejected it. One log line through the agent's own log, rate-limited per (channel, reason) with a count of
 * those left out, so a standby that keeps trying cannot flood the application's standard error.
 *
 * <p>This is the one place the hooks report events to. When the OpenTelemetry Java agent traces the call, each one
 * also becomes a span event ({@code fencing.blocked}, {@code fencing.rejected}) on the current span: every one, not
 * rate-limited, as it belongs to that call's trace.
 */
public final class FencingEvents implements SideEffectEvents {
  private static final AgentLog LOG = AgentLog.get(FencingEvents.class);
  private static final int CHANNELS = Channel.values().length;
  private static final int BLOCK_SLOTS = CHANNELS * BlockReason.values().length * 2;
  private static final int HOOK_SLOTS = BLOCK_SLOTS + CHANNELS * RejectionCounters.Reason.values().length;

  private final String lock;
  private final EventRateLimiter limiter;
  private final LongSupplier clock;
  private final Consumer<String> sink;

  public FencingEvents(String lock, Duration interval) {
    this(lock, interval.toNanos(), new NanoTime(), new WarnLog());
  }

  // The clock and the sink are classes of their own rather than method references, which premain would spin.

  private static final class NanoTime implements LongSupplier {
    @Override
    public long getAsLong() {
      return System.nanoTime();
    }
  }

  private static final class WarnLog implements Consumer<String> {
    @Override
    public void accept(String line) {
      LOG.warn(line);
    }
  }

  FencingEvents(String lock, long intervalNanos, LongSupplier clock, Consumer<String> sink) {
    this.lock = lock;
    this.limiter = new EventRateLimiter(HOOK_SLOTS + CHANNELS, intervalNanos);
    this.clock = clock;
    this.sink = sink;
  }

  @Override
  public void blocked(Channel channel, boolean fenced, Decision d) {
    BlockReason reason = d.reason();
    if (reason == null) {
      return;
    }
    SpanEvents.add(d.observed() ? "fencing.would_block" : "fencing.blocked", "fencing.lock", lock,
        "fencing.token", d.token() > 0 ? d.tokenText() : null, "fencing.channel", channel.label(),
        "fencing.fenced", fenced ? "true" : "false", "fencing.reason", reason.label());
    int slot = ((channel.ordinal() * BlockReason.values().length) + reason.ordinal()) * 2 + (d.observed() ? 1 : 0);
    long suppressed = limiter.tryAcquire(slot, clock.getAsLong());
    if (suppressed == EventRateLimiter.SUPPRESSED) {
      return;
    }
    sink.accept((d.observed() ? "observe mode: would have blocked" : "blocked") + " a " + channel.label()
        + " side effect to " + (fenced ? "a fenced" : "an unfenced") + " destination: lock '" + lock + "', token "
        + (d.token() > 0 ? Long.toString(d.token()) : "none") + ", reason " + reason.label() + " ("
        + reason.description() + ")" + more(suppressed));
  }

  @Override
  public void rejected(Channel channel, RejectionCounters.Reason reason) {
    SpanEvents.add("fencing.rejected", "fencing.lock", lock, "fencing.channel", channel.label(), "fencing.reason",
        reason.label());
    int slot = BLOCK_SLOTS + channel.ordinal() * RejectionCounters.Reason.values().length + reason.ordinal();
    long suppressed = limiter.tryAcquire(slot, clock.getAsLong());
    if (suppressed == EventRateLimiter.SUPPRESSED) {
      return;
    }
    sink.accept("a fence rejected a " + channel.label() + " side effect of lock '" + lock + "': reason " + reason.label()
        + (reason == RejectionCounters.Reason.STALE_TOKEN
            ? " (a newer holder has written: this JVM's lease is gone)"
            : reason == RejectionCounters.Reason.REPLAYED_TOKEN
                ? " (the fence holds this token under another grant: etcd reissued it, see the token-reuse runbook)"
                : " (the side effect reached a fenced resource without a token)")
        + more(suppressed));
  }

  /**
   * A hook failed (a bug to report, in the agent or in a library it calls): one warning per channel and interval, with
   * a count of those left out. Never a span event: the call itself went on, or was blocked as fail-mode says.
   */
  @Override
  public void hookFailed(Channel channel, Throwable error, Decision d) {
    long suppressed = limiter.tryAcquire(HOOK_SLOTS + channel.ordinal(), clock.getAsLong());
    if (suppressed == EventRateLimiter.SUPPRESSED) {
      return;
    }
    sink.accept("the " + channel.label() + " hook failed; the call "
        + (d.isBlock() ? "was blocked (fencing.fail-mode=closed)" : "went on untagged") + ": "
        + AgentLog.describe(error) + more(suppressed));
  }

  private static String more(long suppressed) {
    return suppressed > 0 ? " [" + suppressed + " more like it since the last such line]" : "";
  }
}
