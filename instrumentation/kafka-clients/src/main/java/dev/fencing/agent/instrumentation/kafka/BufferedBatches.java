package dev.fencing.agent.instrumentation.kafka;

import dev.fencing.agent.bootstrap.Decision;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether a producer batch toward an unfenced topic may still leave. The decision taken at send() does not hold for
 * long: a record may wait in the producer (a broker that cannot be reached, retries) for up to delivery.timeout.ms
 * and would then land after a successor's writes. A batch may leave only while every grant its records were tagged
 * under is held, before its lock's local deadline.
 *
 * <p>Which grants those are: each batch keeps the decisions its records were tagged with. send() puts its decision in
 * a per-thread slot ({@link #sending}); the record joins a batch on that same thread, inside send()
 * ({@code ProducerBatch.tryAppend}), and {@link #appended} notes the decision on the batch when it is not the batch's
 * last one: one note per batch and grant, none per record in the steady state. So the grants of several locks (a
 * JVM-wide lock, sections, captured locks) are told apart, each batch is judged by each of them
 * ({@code ScopedGate.recheck} routes a decision to its lock's policy), and no clock is involved.
 *
 * <p>{@link #mayBeHeld} (asked once per turn of the producer's I/O thread) looks at the grants some buffered batch
 * still holds: in the steady state one, still held, so it answers false and the turn scans nothing. A batch's notes
 * go when Kafka completes it (sent, failed, aborted) or splits it (each part gets its notes).
 *
 * <p>Hot path ({@link #sending}, {@link #appended}): two thread-local reads and two reference comparisons per
 * record, no lock, no allocation; the hash lookup and the rest run once per batch and thread.
 */
final class BufferedBatches {
  /** Asks the policy (production: {@code Fencing::recheck} for the KAFKA channel, unfenced). */
  interface Recheck {
    Decision recheck(Decision taggedWith, int count);
  }

  /**
   * The record being sent on this thread: the grant it is tagged under, null when untagged; and the batch and decision
   * this thread noted last, so that the next record of that decision joining that batch costs a reference comparison.
   * A batch's notes only grow until Kafka is done with it, and Kafka appends to a batch only before it closes it, so a
   * pair noted once stays noted for as long as records can join the batch. The last batch stays referenced from its
   * thread until that thread's next note (a closed batch: its buffer went back to the producer's pool).
   */
  private static final class Sending {
    Decision decision;
    Object notedBatch;
    Decision notedDecision;
  }

  private static final Decision[] NONE = new Decision[0];

  private final Recheck recheck;
  /** An anonymous subclass rather than {@code withInitial(Sending::new)}: premain would spin the reference. */
  private final ThreadLocal<Sending> sending = new ThreadLocal<>() {
    @Override
    protected Sending initialValue() {
      return new Sending();
    }
  };
  /** The grants each buffered batch holds records of, oldest first (batches have identity equality). */
  private final Map<Object, Decision[]> byBatch = new ConcurrentHashMap<>();
  /** How many buffered batches hold records of each grant; guarded by {@code this}. */
  private final Map<Decision, int[]> batchesPerGrant = new HashMap<>();
  /** The keys of {@link #batchesPerGrant}, for the I/O thread to read without a lock. */
  private volatile Decision[] grants = NONE;
  /** Batches a delivery-timeout sweep expired because they must not leave, until Kafka fails them. */
  private final Map<Object, Decision> expired = new ConcurrentHashMap<>();
  private final ThreadLocal<Boolean> sweeping = new ThreadLocal<>();

  BufferedBatches(Recheck recheck) {
    this.recheck = recheck;
  }

  /**
   * A record toward an unfenced topic is being sent on this thread, tagged with {@code d} (a TAG decision of one of
   * this JVM's grants), or untagged ({@code null}).
   */
  void sending(Decision d) {
    sending.get().decision = d;
  }

  /** The record being sent on this thread joined {@code batch}. */
  void appended(Object batch) {
    Sending s = sending.get();
    Decision d = s.decision;
    if (d == null || batch == s.notedBatch && d == s.notedDecision) {
      return; // untagged, or the steady state: this thread noted this decision on this batch already
    }
    Decision[] notes = byBatch.get(batch);
    if (notes == null || notes[notes.length - 1] != d) {
      note(batch, notes, d);
    }
    s.notedBatch = batch;
    s.notedDecision = d;
  }

  /**
   * Appends to one batch are serialized by the producer (under its partition's lock), so no other thread changes this
   * batch's notes meanwhile.
   */
  private void note(Object batch, Decision[] notes, Decision d) {
    if (notes == null) {
      byBatch.put(batch, new Decision[] {d});
      hold(d);
      return;
    }
    for (Decision n : notes) {
      if (n == d || sameGrant(n, d)) {
        return; // records of two grants alternate in this batch: both are noted already
      }
    }
    Decision[] more = java.util.Arrays.copyOf(notes, notes.length + 1);
    more[notes.length] = d;
    byBatch.put(batch, more);
    hold(d);
  }

  private static boolean sameGrant(Decision a, Decision b) {
    return a.token() == b.token() && Objects.equals(a.grant(), b.grant()) && Objects.equals(a.lock(), b.lock());
  }

  /** Kafka is done with {@code batch} (sent, failed or aborted): it holds nothing any more. */
  void done(Object batch) {
    Decision[] notes = byBatch.remove(batch);
    if (notes != null) {
      release(notes);
    }
  }

  /** Kafka split {@code batch} (too large for the broker) into {@code parts}, which hold its records. */
  void split(Object batch, Iterable<?> parts) {
    Decision[] notes = byBatch.remove(batch);
    if (notes == null) {
      return;
    }
    for (Object part : parts) {
      byBatch.put(part, notes);
      for (Decision d : notes) {
        hold(d);
      }
    }
    release(notes);
  }

  private synchronized void hold(Decision d) {
    int[] n = batchesPerGrant.get(d);
    if (n == null) {
      batchesPerGrant.put(d, new int[] {1});
      grants = batchesPerGrant.keySet().toArray(NONE);
    } else {
      n[0]++;
    }
  }

  private synchronized void release(Decision[] notes) {
    boolean changed = false;
    for (Decision d : notes) {
      int[] n = batchesPerGrant.get(d);
      if (n != null && --n[0] == 0) {
        batchesPerGrant.remove(d);
        changed = true;
      }
    }
    if (changed) {
      grants = batchesPerGrant.keySet().toArray(NONE);
    }
  }

  /**
   * Null when {@code batch}, toward an unfenced topic, with {@code records} records, may leave now; otherwise the
   * block decision ({@code fail}: its records are counted as blocked). A batch of untagged records only (an exempt
   * caller's, or sent while this JVM had nothing to tag with) is not judged again.
   */
  Decision check(Object batch, int records, boolean fail) {
    Decision[] notes = byBatch.get(batch);
    if (notes == null) {
      return null;
    }
    for (Decision d : notes) {
      Decision blocked = recheck.recheck(d, fail ? Math.max(records, 1) : 0);
      if (blocked != null) {
        return blocked;
      }
    }
    return null;
  }

  /** False when no buffered batch can be held: every grant a buffered batch holds records of is still held. */
  boolean mayBeHeld() {
    for (Decision d : grants) {
      if (recheck.recheck(d, 0) != null) {
        return true;
      }
    }
    return false;
  }

  /** How many batches have notes (tests). */
  int noted() {
    return byBatch.size();
  }

  void sweep(boolean started) {
    sweeping.set(started ? Boolean.TRUE : Boolean.FALSE);
  }

  /** During a delivery-timeout sweep on this thread: expires (and counts) a batch that must not leave. */
  Decision expireHeld(Object batch, int records) {
    if (sweeping.get() != Boolean.TRUE || !mayBeHeld()) {
      return null;
    }
    Decision d = check(batch, records, true);
    if (d != null) {
      expired.put(batch, d);
    }
    return d;
  }

  Decision expiredHeld(Object batch) {
    return expired.isEmpty() ? null : expired.remove(batch);
  }
}
