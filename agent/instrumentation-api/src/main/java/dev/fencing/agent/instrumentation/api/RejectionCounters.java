package dev.fencing.agent.instrumentation.api;

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
  private static final int PER_LOCK = Channel.values().length * REASONS;

  /**
   * The lock labels (index 0: side effects outside every configured lock's scope), their counters and their event
   * sinks, replaced whole when a lock is added ({@link #addLock}), so a reader always sees the three agree.
   */
  private record Table(String[] locks, LongAdder[] adders, SideEffectEvents[] events) {
  }

  private volatile Table table;

  public RejectionCounters() {
    this(SideEffectEvents.NONE);
  }

  /** Each recorded rejection is also reported to {@code events} (a log line). */
  public RejectionCounters(SideEffectEvents events) {
    this(java.util.List.of("(any)"), java.util.List.of(events));
  }

  /**
   * Counters per lock: {@code locks.get(0)} counts rejections of side effects outside every other listed lock's scope
   * (an inbound token's, or made with no lock at all); {@code events.get(i)} reports those of {@code locks.get(i)}.
   */
  public RejectionCounters(java.util.List<String> locks, java.util.List<? extends SideEffectEvents> events) {
    LongAdder[] adders = new LongAdder[locks.size() * PER_LOCK];
    for (int i = 0; i < adders.length; i++) {
      adders[i] = new LongAdder();
    }
    this.table = new Table(locks.toArray(new String[0]), adders, events.toArray(new SideEffectEvents[0]));
  }

  /**
   * Counts {@code lock}'s rejections under its own label from now on (an application lock the agent captured; bounded
   * by {@code fencing.capture.max-locks}). Idempotent. Rare, so it copies: {@link #record} never takes a lock.
   */
  public synchronized void addLock(String lock, SideEffectEvents events) {
    Table t = table;
    if (indexOf(t, lock) != 0 || t.locks()[0].equals(lock)) {
      return;
    }
    int n = t.locks().length;
    String[] locks = java.util.Arrays.copyOf(t.locks(), n + 1);
    locks[n] = lock;
    SideEffectEvents[] sinks = java.util.Arrays.copyOf(t.events(), n + 1);
    sinks[n] = events;
    LongAdder[] adders = java.util.Arrays.copyOf(t.adders(), (n + 1) * PER_LOCK);
    for (int i = n * PER_LOCK; i < adders.length; i++) {
      adders[i] = new LongAdder();
    }
    table = new Table(locks, adders, sinks);
  }

  /**
   * A fence refused a side effect of the calling thread: counted under the lock whose scope the thread is in (the
   * thread that sees the refusal is the one that made the side effect: the JDBC call, the HTTP response).
   */
  public void record(Channel channel, Reason reason) {
    Table t = table;
    int lock = 0;
    if (t.locks().length > 1) {
      dev.fencing.agent.bootstrap.Decision d = dev.fencing.agent.bootstrap.Fencing.current();
      lock = d == null ? 0 : indexOf(t, d.lock());
    }
    t.adders()[lock * PER_LOCK + channel.ordinal() * REASONS + reason.ordinal()].increment();
    t.events()[lock].rejected(channel, reason);
  }

  private static int indexOf(Table t, String lock) {
    String[] locks = t.locks();
    for (int i = 1; i < locks.length; i++) {
      if (locks[i].equals(lock)) {
        return i;
      }
    }
    return 0;
  }

  /** Rejections of {@code lock}'s side effects (an unknown lock: those outside every lock). */
  public long count(String lock, Channel channel, Reason reason) {
    Table t = table;
    return t.adders()[indexOf(t, lock) * PER_LOCK + channel.ordinal() * REASONS + reason.ordinal()].sum();
  }

  /** Rejections of every lock together. */
  public long count(Channel channel, Reason reason) {
    Table t = table;
    long sum = 0;
    for (int i = 0; i < t.locks().length; i++) {
      sum += t.adders()[i * PER_LOCK + channel.ordinal() * REASONS + reason.ordinal()].sum();
    }
    return sum;
  }
}
