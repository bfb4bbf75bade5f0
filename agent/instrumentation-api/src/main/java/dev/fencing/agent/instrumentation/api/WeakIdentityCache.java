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
 * A caller may keep an {@link Entry} to find its value again by one comparison ({@link Entry#valueFor}).
 */
public final class WeakIdentityCache<K, V> {
  private final ConcurrentHashMap<Object, WeakKey<K, V>> map = new ConcurrentHashMap<>();
  private final ReferenceQueue<K> queue = new ReferenceQueue<>();
  /** An anonymous subclass rather than {@code withInitial(LookupKey::new)}: premain makes caches, and would spin it. */
  private final ThreadLocal<LookupKey> lookup = new ThreadLocal<>() {
    @Override
    protected LookupKey initialValue() {
      return new LookupKey();
    }
  };

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
      return valueOf(map.get(k));
    } finally {
      k.set(null);
    }
  }

  /**
   * As {@link #get(Object)}, searching with {@code probe}, the calling thread's probe from the hook state it entered
   * with ({@link ReentryGuard#enterThread()}): no thread-local read of its own.
   */
  public V get(K key, ReentryGuard.IdentityProbe probe) {
    return valueOf(find(key, probe));
  }

  /** As {@link #get(Object, ReentryGuard.IdentityProbe)}, returning the entry (null for none) for the caller to keep. */
  public Entry<V> entry(K key, ReentryGuard.IdentityProbe probe) {
    return find(key, probe);
  }

  private WeakKey<K, V> find(K key, ReentryGuard.IdentityProbe probe) {
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
    WeakKey<K, V> made = new WeakKey<>(key, create.apply(key), queue);
    WeakKey<K, V> prev = map.putIfAbsent(made, made);
    return (prev != null ? prev : made).value;
  }

  public void put(K key, V value) {
    putEntry(key, value);
  }

  /** As {@link #put}, returning the new entry for the caller to keep. */
  public Entry<V> putEntry(K key, V value) {
    expunge();
    WeakKey<K, V> e = new WeakKey<>(key, value, queue);
    map.put(e, e);
    return e;
  }

  private static <V> V valueOf(WeakKey<?, V> e) {
    return e == null ? null : e.value;
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
      return other instanceof WeakKey && ((WeakKey<?, ?>) other).get() == referent;
    }
  }

  /**
   * One key's entry: the key held weakly, and the value it was put with (a later {@code put} for the same key makes a
   * new entry). Keeping one keeps its value, never its key.
   */
  public interface Entry<V> {
    /** The value, if this is {@code key}'s entry and {@code key} is not null; else null. */
    V valueFor(Object key);
  }

  /** The map's key and its entry at once, so that an entry costs no object more than its weak reference. */
  private static final class WeakKey<T, V> extends WeakReference<T> implements Entry<V> {
    private final int hash;
    private final V value;

    WeakKey(T referent, V value, ReferenceQueue<? super T> queue) {
      super(referent, queue);
      this.hash = System.identityHashCode(referent);
      this.value = value;
    }

    @Override
    public V valueFor(Object key) {
      return key != null && get() == key ? value : null;
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
      return other instanceof WeakKey && get() != null && ((WeakKey<?, ?>) other).get() == get();
    }
  }
}
