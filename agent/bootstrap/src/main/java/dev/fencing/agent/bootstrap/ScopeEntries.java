package dev.fencing.agent.bootstrap;

/**
 * The lock-scope entries a thread is inside, innermost last, so that a thread it starts inside a scope can tell
 * whether that entry is still live. A thread started with {@code new Thread} inside a section or a captured lock
 * inherits the scope ({@link Inherited}) for as long as the entry it was started in lasts: once the section returns or
 * the lock is released on the entering thread, the inherited scope is void and the thread is outside every scope, so
 * a library thread that happened to be created inside a scope (lazily, on first use) never carries it beyond it.
 * Written by the owning thread only; read by the threads it started. java.base types only.
 */
final class ScopeEntries {
  private long[] ids = new long[4];
  /** Entries live; written after {@link #ids}, so a reader that sees a depth sees the ids below it. */
  private volatile int depth;
  private long next;

  /** An entry into a scope on the owning thread. Allocates only when nesting deeper than ever before. */
  void push() {
    int d = depth;
    if (d == ids.length) {
      long[] grown = new long[d * 2];
      System.arraycopy(ids, 0, grown, 0, d);
      ids = grown;
    }
    ids[d] = ++next;
    depth = d + 1;
  }

  /** The innermost entry ended on the owning thread. */
  void pop() {
    int d = depth;
    if (d > 0) {
      depth = d - 1;
    }
  }

  /** Every entry ended (a pooled thread starts its next task): threads started in them are outside every scope. */
  void clear() {
    depth = 0;
  }

  /** The innermost live entry as inherited by a thread started now, or null when there is none. */
  Inherited inherit(LockScope scope) {
    int d = depth;
    return d == 0 ? null : new Inherited(scope, this, d, ids[d - 1]);
  }

  /** Whether entry {@code id} at {@code level} (1-based) is still live on the owning thread. */
  boolean live(int level, long id) {
    long[] now = ids;
    return depth >= level && level <= now.length && now[level - 1] == id;
  }

  /**
   * A lock scope a thread inherited from the thread that started it, bound to the entry it was started in. Threads
   * of the JDK's and of known libraries' own kinds (fork-join workers, Netty event loops, Kafka's, ZooKeeper's and
   * gRPC's I/O threads) never take it: they run work of many callers, which carries its own scope explicitly.
   */
  static final class Inherited {
    final LockScope scope;
    private final ScopeEntries entries;
    private final int level;
    private final long id;

    Inherited(LockScope scope, ScopeEntries entries, int level, long id) {
      this.scope = scope;
      this.entries = entries;
      this.level = level;
      this.id = id;
    }

    /** Set once the thread holding this inheritance was found to be one that takes it. */
    private boolean checked;

    /** The same inheritance, for a thread started by the thread holding this one. */
    Inherited again() {
      return new Inherited(scope, entries, level, id);
    }

    /**
     * The scope for the current thread, which holds this inheritance: while the entry it was started in lasts and the
     * thread is one that takes it; null otherwise.
     */
    LockScope scopeIfLive() {
      if (!checked) {
        if (!takes(Thread.currentThread())) {
          return null;
        }
        checked = true;
      }
      return entries.live(level, id) ? scope : null;
    }

    /** Whether {@code thread} is one that may take an inherited scope (see the class comment). */
    static boolean takes(Thread thread) {
      if (thread instanceof java.util.concurrent.ForkJoinWorkerThread) {
        return false;
      }
      String name = thread.getClass().getName();
      return !(name.startsWith("jdk.internal.") || name.startsWith("sun.") || name.startsWith("io.netty.")
          || name.startsWith("org.apache.kafka.") || name.startsWith("org.apache.zookeeper.")
          || name.startsWith("io.grpc.") || name.startsWith("io.vertx.") || name.startsWith("reactor."));
    }
  }
}
