package dev.fencing.agent.metrics;

import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * How long the coordinator takes to answer, by request: the source of
 * {@code fencing_coordinator_request_duration_seconds} (a histogram, docs/DESIGN.md section 7). Fixed buckets, plain
 * adders: recording takes no lock. Requests happen on the agent's lease threads, a few per TTL, never on the
 * application's hot path.
 */
public final class CoordinatorLatency {
  /** The {@code op} label. */
  public enum Op {
    /** Granting a lease. */
    GRANT("grant"),
    /** One keepalive, sent to acknowledged. */
    KEEPALIVE("keepalive"),
    /** A campaign, sent to holding the lock: includes the wait while another process holds it. */
    CAMPAIGN("campaign");

    private final String label;

    Op(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  /** Receives each recorded duration (the OTLP export's histogram). */
  public interface Listener {
    void recorded(Op op, double seconds);
  }

  public static final String NAME = "fencing_coordinator_request_duration_seconds";
  public static final String HELP = "Time the coordinator took to answer a request (grant, keepalive, campaign), "
      + "failed requests included; a campaign lasts until the lock is held";
  /**
   * Upper bounds in seconds (the +Inf bucket follows): etcd answers in milliseconds; a keepalive near the TTL
   * (seconds) is about to lose the lease.
   */
  private static final double[] BOUNDS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

  private final String lock;
  private final LongAdder[][] buckets = new LongAdder[Op.values().length][BOUNDS.length + 1];
  private final DoubleAdder[] sums = new DoubleAdder[Op.values().length];
  private volatile Listener listener;

  public CoordinatorLatency(String lock) {
    this.lock = lock;
    for (int o = 0; o < buckets.length; o++) {
      for (int b = 0; b < buckets[o].length; b++) {
        buckets[o][b] = new LongAdder();
      }
      sums[o] = new DoubleAdder();
    }
  }

  public String lock() {
    return lock;
  }

  /** The bucket upper bounds, without +Inf. */
  public static double[] bounds() {
    return BOUNDS.clone();
  }

  /** Records one request of {@code op} that took {@code nanos}. */
  public void record(Op op, long nanos) {
    double seconds = Math.max(0, nanos) / 1e9;
    int b = 0;
    while (b < BOUNDS.length && seconds > BOUNDS[b]) {
      b++;
    }
    buckets[op.ordinal()][b].increment();
    sums[op.ordinal()].add(seconds);
    Listener l = listener;
    if (l != null) {
      try {
        l.recorded(op, seconds);
      } catch (RuntimeException ignored) {
        // an exporter's problem must not fail a lease request
      }
    }
  }

  /** Observations per bucket (not cumulative), the last one above every bound (+Inf). */
  public long[] counts(Op op) {
    long[] out = new long[BOUNDS.length + 1];
    for (int b = 0; b < out.length; b++) {
      out[b] = buckets[op.ordinal()][b].sum();
    }
    return out;
  }

  public double sum(Op op) {
    return sums[op.ordinal()].sum();
  }

  public long count(Op op) {
    long n = 0;
    for (long c : counts(op)) {
      n += c;
    }
    return n;
  }

  public void listener(Listener l) {
    this.listener = l;
  }
}
