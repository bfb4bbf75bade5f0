package dev.fencing.agent.events;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * At most one event per slot per period, counting the ones left out. Lock-free; a suppressed event costs a clock
 * comparison and an atomic increment, and allocates nothing.
 */
public final class EventRateLimiter {
  /** Returned by {@link #tryAcquire} for an event that must not be logged. */
  public static final long SUPPRESSED = -1;
  private static final long NEVER = Long.MIN_VALUE;

  private final long periodNanos;
  /** Per slot: the nanoTime from which the next event may be logged, or NEVER before the first. */
  private final AtomicLongArray nextAllowed;
  private final AtomicLongArray suppressed;

  public EventRateLimiter(int slots, long periodNanos) {
    if (periodNanos < 0) {
      throw new IllegalArgumentException("negative period");
    }
    this.periodNanos = periodNanos;
    this.nextAllowed = new AtomicLongArray(slots);
    this.suppressed = new AtomicLongArray(slots);
    for (int i = 0; i < slots; i++) {
      nextAllowed.set(i, NEVER);
    }
  }

  /**
   * An event in {@code slot} at {@code nowNanos}: {@link #SUPPRESSED}, or the number of events of this slot suppressed
   * since the last one that was let through (to be reported with this one).
   */
  public long tryAcquire(int slot, long nowNanos) {
    long next = nextAllowed.get(slot);
    // nanoTime values are compared by difference: they may be negative and wrap.
    if (next != NEVER && nowNanos - next < 0) {
      suppressed.incrementAndGet(slot);
      return SUPPRESSED;
    }
    // Take the count before claiming the period: events suppressed after the claim belong to the next line. A
    // candidate that loses the claim gives back what it took, plus itself.
    long before = suppressed.getAndSet(slot, 0);
    if (!nextAllowed.compareAndSet(slot, next, nowNanos + periodNanos)) {
      suppressed.addAndGet(slot, before + 1);
      return SUPPRESSED;
    }
    return before;
  }
}
