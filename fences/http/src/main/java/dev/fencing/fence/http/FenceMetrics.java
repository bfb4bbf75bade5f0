package dev.fencing.fence.http;

import dev.fencing.protocol.Rejection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code fencing_fence_rejections_total{fence,lock,reason}} (docs/DESIGN.md section 7) without a metrics library, so that
 * the fence drops into any service: LongAdders per lock and {@link Rejection}, every combination of the guarded locks
 * starting at 0. A service exposes {@link #prometheusText()} on its metrics endpoint, or, with Micrometer, binds
 * {@link HttpFenceMeterBinder} to its registry (Micrometer name {@code fencing.fence.rejections}). The lock label is
 * a guarded lock's name, or {@value #UNKNOWN_LOCK} for a request naming none of several guarded locks: never a
 * client's value.
 */
public final class FenceMetrics {

  public static final String NAME = "fencing_fence_rejections_total";
  public static final String UNKNOWN_LOCK = "(unknown)";

  /** One series: labels and value. */
  public record Sample(String fence, String lock, String reason, long value) {
  }

  private final String fence;
  private final String fallbackLock;
  private final Map<String, LongAdder[]> counters = new ConcurrentHashMap<>();

  /** Counters for the fence kind {@code fence} ({@code http}) and its guarded {@code locks}. */
  public FenceMetrics(String fence, Collection<String> locks) {
    this.fence = fence;
    this.fallbackLock = locks.size() == 1 ? locks.iterator().next() : UNKNOWN_LOCK;
    for (String lock : locks) {
      adders(lock);
    }
    adders(fallbackLock);
  }

  /** The {@code fence} label ({@code http}). */
  public String fence() {
    return fence;
  }

  /** The lock labels that have series: the guarded locks, and {@value #UNKNOWN_LOCK} with several, sorted. */
  public List<String> locks() {
    return List.copyOf(new TreeMap<>(counters).keySet());
  }

  /** The label for a rejection of {@code lock}, null when the request named no guarded lock. */
  String lockLabel(String lock) {
    return lock == null ? fallbackLock : lock;
  }

  void increment(String lock, Rejection reason) {
    adders(lockLabel(lock))[reason.ordinal()].increment();
  }

  public long count(String lock, Rejection reason) {
    LongAdder[] a = counters.get(lock);
    return a == null ? 0 : a[reason.ordinal()].sum();
  }

  /** Every series, sorted by lock, then in the order of {@link Rejection}. */
  public List<Sample> samples() {
    List<Sample> out = new ArrayList<>();
    for (Map.Entry<String, LongAdder[]> e : new TreeMap<>(counters).entrySet()) {
      for (Rejection r : Rejection.values()) {
        out.add(new Sample(fence, e.getKey(), r.label(), e.getValue()[r.ordinal()].sum()));
      }
    }
    return out;
  }

  /**
   * The Prometheus text exposition (format 0.0.4) of the family, with its HELP and TYPE lines. To merge it with other
   * fences' samples into one family, write {@link #samples()} instead.
   */
  public String prometheusText() {
    StringBuilder b = new StringBuilder(1024);
    b.append("# HELP ").append(NAME).append(" Requests or writes refused by a fence, by reason.\n");
    b.append("# TYPE ").append(NAME).append(" counter\n");
    for (Sample s : samples()) {
      b.append(NAME).append("{fence=\"");
      escape(b, s.fence());
      b.append("\",lock=\"");
      escape(b, s.lock());
      b.append("\",reason=\"");
      escape(b, s.reason());
      b.append("\"} ").append(s.value()).append('\n');
    }
    return b.toString();
  }

  private LongAdder[] adders(String lock) {
    LongAdder[] a = counters.get(lock);
    return a != null ? a : counters.computeIfAbsent(lock, k -> {
      LongAdder[] fresh = new LongAdder[Rejection.values().length];
      for (int i = 0; i < fresh.length; i++) {
        fresh[i] = new LongAdder();
      }
      return fresh;
    });
  }

  private static void escape(StringBuilder b, String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '\\' || c == '"') {
        b.append('\\').append(c);
      } else if (c == '\n') {
        b.append("\\n");
      } else {
        b.append(c);
      }
    }
  }
}
