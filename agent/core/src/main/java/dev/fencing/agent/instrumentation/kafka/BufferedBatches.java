package dev.fencing.agent.instrumentation.kafka;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Whether a producer batch toward an unfenced topic may still leave. The decision taken at send() does not hold for
 * long: a record may wait in the producer (a broker that cannot be reached, retries) for up to delivery.timeout.ms
 * and would then land after a successor's writes. A batch may leave only while the grant its records were tagged
 * under is held, before its local deadline.
 *
 * <p>Which grant that is: a batch keeps no mark of it, so this remembers the grant of the latest tagged record
 * toward an unfenced topic and since when (the producer's clock, System.currentTimeMillis, the clock of a batch's
 * creation time); a batch created from that moment on holds only records of that grant, one created before may hold
 * records of the grant before it, and is judged by that one. A record that waited in send() (metadata, buffer
 * memory) across a loss and the next grant can still join a batch created later: the one case this does not see.
 *
 * <p>Hot path ({@link #tagged}): one volatile read and a reference comparison per record; the rest runs once per
 * batch on the producer's I/O thread.
 */
final class BufferedBatches {
  /** Asks the policy (production: {@code Fencing::recheck} for the KAFKA channel, unfenced). */
  interface Recheck {
    Decision recheck(Decision taggedWith, int count);
  }

  /** The grant records are tagged under, since when, and the one before it. Immutable, replaced per grant. */
  private static final class Tagging {
    final Decision tag;
    final long sinceMs;
    final Decision previous;

    Tagging(Decision tag, long sinceMs, Decision previous) {
      this.tag = tag;
      this.sinceMs = sinceMs;
      this.previous = previous;
    }
  }

  private final Recheck recheck;
  private final LongSupplier clockMs;
  private volatile Tagging tagging;
  /** Batches a delivery-timeout sweep expired because they must not leave, until Kafka fails them. */
  private final Map<Object, Decision> expired = new ConcurrentHashMap<>();
  private final ThreadLocal<Boolean> sweeping = new ThreadLocal<>();

  BufferedBatches(Recheck recheck, LongSupplier clockMs) {
    this.recheck = recheck;
    this.clockMs = clockMs;
  }

  /** A record toward an unfenced topic was tagged with {@code d} (a TAG decision of this JVM's own grant). */
  void tagged(Decision d) {
    Tagging t = tagging;
    if (t == null || t.tag != d) {
      moveTo(d);
    }
  }

  private synchronized void moveTo(Decision d) {
    Tagging t = tagging;
    if (t != null && (t.tag == d || sameGrant(t.tag, d))) {
      return; // another thread got there first, or a second decision object for the same grant
    }
    tagging = new Tagging(d, clockMs.getAsLong(), t == null ? null : t.tag);
  }

  private static boolean sameGrant(Decision a, Decision b) {
    return a.token() == b.token() && Objects.equals(a.grant(), b.grant()) && Objects.equals(a.lock(), b.lock());
  }

  /**
   * Null when a batch toward an unfenced topic created at {@code createdMs} with {@code records} records may leave
   * now; otherwise the block decision ({@code fail}: counted once per record).
   */
  Decision check(long createdMs, int records, boolean fail) {
    Tagging t = tagging;
    Decision taggedWith;
    if (t == null) {
      taggedWith = null; // nothing tagged yet: whatever is buffered went untagged, and the policy alone judges
    } else if (createdMs >= t.sinceMs || t.previous == null) {
      // Created in the millisecond the grant tagged its first record, or later: the first record of a new grant
      // creates a new batch in that same millisecond, and must not be judged by the grant before.
      taggedWith = t.tag;
    } else {
      taggedWith = t.previous; // may hold records of the grant before: the stricter judge
    }
    return recheck.recheck(taggedWith, fail ? Math.max(records, 1) : 0);
  }

  /** False when no buffered batch can be held: nothing tagged yet, or one grant only and it is still held. */
  boolean mayBeHeld() {
    Tagging t = tagging;
    if (t == null) {
      return false;
    }
    return t.previous != null || recheck.recheck(t.tag, 0) != null;
  }

  void sweep(boolean started) {
    sweeping.set(started ? Boolean.TRUE : Boolean.FALSE);
  }

  /** During a delivery-timeout sweep on this thread: expires (and counts) a batch that must not leave. */
  Decision expireHeld(Object batch, long createdMs, int records) {
    if (sweeping.get() != Boolean.TRUE || !mayBeHeld()) {
      return null;
    }
    Decision d = check(createdMs, records, true);
    if (d != null) {
      expired.put(batch, d);
    }
    return d;
  }

  Decision expiredHeld(Object batch) {
    return expired.isEmpty() ? null : expired.remove(batch);
  }
}
