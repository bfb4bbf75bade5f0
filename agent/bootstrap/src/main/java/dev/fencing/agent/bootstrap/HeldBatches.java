package dev.fencing.agent.bootstrap;

import java.util.ArrayList;
import java.util.List;

/**
 * The producer batches one turn of the producer's I/O thread took out of its buffer to fail, each with the block
 * decision it fails with, collected under each partition's lock and failed after it is released (callbacks must not
 * run under Kafka's lock). Made only when a batch must be failed: a turn that fails nothing allocates nothing.
 * java.base types only (batches travel as Object), for advice inlined into RecordAccumulator.
 */
public final class HeldBatches {
  private final List<Object> batches = new ArrayList<>();
  private final List<Decision> decisions = new ArrayList<>();

  private HeldBatches() {}

  /** Adds {@code batch} failing for {@code d} to {@code held}, made on the first: returns the collection. */
  public static HeldBatches add(HeldBatches held, Object batch, Decision d) {
    HeldBatches h = held != null ? held : new HeldBatches();
    h.batches.add(batch);
    h.decisions.add(d);
    return h;
  }

  /** How many batches {@code held} has; 0 for null (nothing was taken out). */
  public static int size(HeldBatches held) {
    return held == null ? 0 : held.batches.size();
  }

  public Object batch(int i) {
    return batches.get(i);
  }

  public Decision decision(int i) {
    return decisions.get(i);
  }
}
