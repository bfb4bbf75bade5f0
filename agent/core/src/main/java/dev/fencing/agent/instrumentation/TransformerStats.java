package dev.fencing.agent.instrumentation;

import dev.fencing.agent.log.AgentLog;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the class-load path costs, kept only at {@code fencing.log.level=debug}: classes seen, how many were parsed
 * (a marker or name matched) and instrumented, and the time spent on each kind. Logged every {@link #EVERY} classes
 * so a startup's share can be read off the log without a profiler.
 */
final class TransformerStats {
  private static final AgentLog LOG = AgentLog.get(FencingTransformer.class);
  static final long EVERY = 2000;

  private final AtomicLong seen = new AtomicLong();
  private final AtomicLong rejectNanos = new AtomicLong();
  private final AtomicLong parsed = new AtomicLong();
  private final AtomicLong parseNanos = new AtomicLong();
  private final AtomicLong instrumented = new AtomicLong();
  private final AtomicLong ruledOut = new AtomicLong();
  private final AtomicLong ruledOutNanos = new AtomicLong();
  /** Per instrumentation (simple class name): candidates parsed for it, and their time in microseconds. */
  private final Map<String, LongAdder[]> byInstrumentation = new ConcurrentHashMap<>();

  /** A class no instrumentation can want (name and marker search only). */
  void rejected(long nanos) {
    rejectNanos.addAndGet(nanos);
    count();
  }

  /** A candidate whose class-file headers ruled it out ({@link SuperTypeFilter}), never described. */
  void ruledOutByHeaders(long nanos) {
    ruledOutNanos.addAndGet(nanos);
    ruledOut.incrementAndGet();
    count();
  }

  /** A candidate described and matched, and woven when {@code woven}. */
  void parsed(long nanos, boolean woven, Iterable<String> instrumentations) {
    for (String name : instrumentations) {
      LongAdder[] a = byInstrumentation.computeIfAbsent(name, k -> new LongAdder[] {new LongAdder(), new LongAdder()});
      a[0].increment();
      a[1].add(nanos / 1000);
    }
    parseNanos.addAndGet(nanos);
    parsed.incrementAndGet();
    if (woven) {
      instrumented.incrementAndGet();
    }
    count();
  }

  private void count() {
    if (seen.incrementAndGet() % EVERY == 0) {
      LOG.debug(summary());
    }
  }

  String summary() {
    return "transformer: " + seen.get() + " classes seen, " + parsed.get() + " parsed, " + instrumented.get()
        + " instrumented; " + rejectNanos.get() / 1_000_000 + " ms rejecting, " + ruledOut.get()
        + " candidates ruled out by class-file headers in " + ruledOutNanos.get() / 1_000_000 + " ms, "
        + parseNanos.get() / 1_000_000 + " ms parsing, matching and weaving; parsed per instrumentation (classes, ms): " + perInstrumentation();
  }

  private String perInstrumentation() {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<String, LongAdder[]> e : byInstrumentation.entrySet()) {
      b.append(b.length() == 0 ? "" : ", ").append(e.getKey()).append(' ').append(e.getValue()[0].sum()).append(' ')
          .append(e.getValue()[1].sum() / 1000);
    }
    return b.toString();
  }
}
