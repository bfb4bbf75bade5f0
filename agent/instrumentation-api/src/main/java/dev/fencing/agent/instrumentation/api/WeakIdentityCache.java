package dev.fencing.agent.instrumentation.api;

import dev.fencing.agent.bootstrap.ReentryGuard;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Per-object state for objects the application owns (statements, connections): keyed by identity, held weakly so the
 * agent never keeps them alive, and read without locks or allocation (a per-thread lookup key). Entries whose key was
 * collected are dropped by the next call of any method, so the map follows the live keys, not the total ever seen.
 */
public final class WeakIdentityCache<K, V> {
  private final ConcurrentHashMap<Object, V> map = new ConcurrentHashMap<>();
  private final ReferenceQueue<K> queue = new ReferenceQueue<>();
  private final ThreadLocal<LookupKey> lookup = ThreadLocal.withInitial(LookupKey::new);

  /**
   * The value for {@code key}, or null. Also drops the entries of collected keys: a cache only read from (statements
   * executed, no new ones prepared) must not keep them until the next put. With nothing collected that is one
   * volatile read.
   */
  public V get(K key) {
    expunge();
    LookupKey k = lookup.get();
    k.set(key);
    try {
      return map.get(k);
    } finally {
      k.set(null);
    }
  }

  /**
   * As {@link #get(Object)}, searching with {@code probe}, the calling thread's probe from the hook state it entered
   * with ({@link ReentryGuard#enterThread()}): no thread-local read of its own.
   */
  public V get(K key, ReentryGuard.IdentityProbe probe) {
    expunge();
    probe.set(key);
    try {
      return map.get(probe);
    } finally {
      probe.set(null);
    }
  }

  public V computeIfAbsent(K key, Function<K, V> create) {
    V v = get(key);
    if (v != null) {
      return v;
    }
    expunge();
    V created = create.apply(key);
    V prev = map.putIfAbsent(new WeakKey<>(key, queue), created);
    return prev != null ? prev : created;
  }

  public void put(K key, V value) {
    expunge();
    map.put(new WeakKey<>(key, queue), value);
  }

  public int size() {
    expunge();
    return map.size();
  }

  /** For tests: the entries, stale ones included. */
  int sizeWithoutExpunging() {
    return map.size();
  }

  private void expunge() {
    Object ref;
    while ((ref = queue.poll()) != null) {
      map.remove(ref);
    }
  }

  /** Equal to a {@link WeakKey} of the same referent. */
  private static final class LookupKey {
    private Object referent;
    private int hash;

    void set(Object o) {
      referent = o;
      hash = System.identityHashCode(o);
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof WeakKey && ((WeakKey<?>) other).get() == referent;
    }
  }

  private static final class WeakKey<T> extends WeakReference<T> {
    private final int hash;

    WeakKey(T referent, ReferenceQueue<? super T> queue) {
      super(referent, queue);
      this.hash = System.identityHashCode(referent);
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object other) {
      if (other == this) {
        return true;
      }
      if (other instanceof LookupKey) {
        return ((LookupKey) other).referent == get() && get() != null;
      }
      if (other instanceof ReentryGuard.IdentityProbe) {
        return ((ReentryGuard.IdentityProbe) other).referent() == get() && get() != null;
      }
      return other instanceof WeakKey && get() != null && ((WeakKey<?>) other).get() == get();
    }
  }
}
