package dev.fencing.agent.instrumentation;

import dev.fencing.agent.log.AgentLog;
import java.util.concurrent.atomic.AtomicLong;

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

  /** A class no instrumentation can want (name and marker search only). */
  void rejected(long nanos) {
    rejectNanos.addAndGet(nanos);
    count();
  }

  /** A candidate described and matched, and woven when {@code woven}. */
  void parsed(long nanos, boolean woven) {
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
        + " instrumented; " + rejectNanos.get() / 1_000_000 + " ms rejecting, " + parseNanos.get() / 1_000_000
        + " ms parsing, matching and weaving";
  }
}
