package dev.fencing.agent.instrumentation.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WeakIdentityCacheTest {
  /** Equal but distinct keys must not share an entry: statements and connections are told apart by identity. */
  record Key(int id) {}

  @Test
  void keysAreComparedByIdentity() {
    WeakIdentityCache<Object, String> cache = new WeakIdentityCache<>();
    Key a = new Key(1);
    Key b = new Key(1);
    cache.put(a, "a");
    assertThat(cache.get(a)).isEqualTo("a");
    assertThat(cache.get(b)).isNull();
    assertThat(cache.computeIfAbsent(b, k -> "b")).isEqualTo("b");
    assertThat(cache.get(a)).isEqualTo("a");
  }

  /** A lookup with the thread's hook probe finds what a plain lookup finds, by identity, and leaves no key behind. */
  @Test
  void theHookThreadsProbeFindsEntriesByIdentity() {
    WeakIdentityCache<Object, String> cache = new WeakIdentityCache<>();
    Key a = new Key(1);
    Key b = new Key(1);
    cache.put(a, "a");
    dev.fencing.agent.bootstrap.ReentryGuard.HookThread t = dev.fencing.agent.bootstrap.ReentryGuard.enterThread();
    try {
      assertThat(cache.get(a, t.probe())).isEqualTo("a");
      assertThat(cache.get(b, t.probe())).isNull();
      assertThat(t.probe().referent()).isNull();
      assertThat(cache.computeIfAbsent(b, k -> "b")).isEqualTo("b");
      assertThat(cache.get(b, t.probe())).isEqualTo("b");
      assertThat(cache.get(a, t.probe())).isEqualTo("a");
    } finally {
      dev.fencing.agent.bootstrap.ReentryGuard.exit();
    }
  }

  @Test
  void entriesGoAwayWithTheirKeys() throws Exception {
    WeakIdentityCache<Object, String> cache = new WeakIdentityCache<>();
    for (int i = 0; i < 1000; i++) {
      cache.put(new Object(), "x");
    }
    for (int i = 0; i < 50 && cache.size() > 100; i++) {
      System.gc();
      Thread.sleep(20);
    }
    assertThat(cache.size()).isLessThan(100);
  }

  @Test
  void theCacheNeverKeepsAKeyAlive() throws Exception {
    WeakIdentityCache<Object, String> cache = new WeakIdentityCache<>();
    Object key = new Object();
    WeakReference<Object> ref = new WeakReference<>(key);
    cache.put(key, "x");
    cache.get(key);
    key = null;
    for (int i = 0; i < 50 && ref.get() != null; i++) {
      System.gc();
      Thread.sleep(20);
    }
    assertThat(ref.get()).as("key collected while in the cache").isNull();
  }

  /**
   * An entry kept by a caller answers for its own key only, by identity; it keeps its value but never its key, and its
   * key's collection drops it from the map as any entry.
   */
  @Test
  void aKeptEntryFindsItsValueByOneComparisonAndNeverKeepsItsKey() throws Exception {
    WeakIdentityCache<Object, String> cache = new WeakIdentityCache<>();
    Key a = new Key(1);
    Key b = new Key(1);
    WeakIdentityCache.Entry<String> put = cache.putEntry(a, "a");
    assertThat(put.valueFor(a)).isEqualTo("a");
    assertThat(put.valueFor(b)).isNull();
    assertThat(put.valueFor(null)).isNull();
    dev.fencing.agent.bootstrap.ReentryGuard.HookThread t = dev.fencing.agent.bootstrap.ReentryGuard.thread();
    assertThat(cache.entry(a, t.probe())).isSameAs(put);
    assertThat(cache.entry(b, t.probe())).isNull();
    assertThat(t.probe().referent()).isNull();

    Object key = new Object();
    WeakReference<Object> ref = new WeakReference<>(key);
    WeakIdentityCache.Entry<String> kept = cache.putEntry(key, "kept");
    key = null;
    for (int i = 0; i < 50 && ref.get() != null; i++) {
      System.gc();
      Thread.sleep(20);
    }
    assertThat(ref.get()).as("key collected while its entry is kept").isNull();
    assertThat(kept.valueFor(null)).isNull();
    for (int i = 0; i < 50 && cache.size() != 1; i++) {
      Thread.sleep(20); // the collected key's reference is queued by the JVM's reference handler, soon after
    }
    assertThat(cache.size()).as("only a's entry is left").isEqualTo(1);
  }

  /** An application that keeps creating statements: the entries of collected ones are dropped as new ones come in. */
  @Test
  void stalesAreExpungedByLaterPutsSoTheMapFollowsTheLiveKeysNotTheTotal() throws Exception {
    WeakIdentityCache<Object, Boolean> cache = new WeakIdentityCache<>();
    List<Object> live = new ArrayList<>();
    int max = 0;
    for (int round = 0; round < 20; round++) {
      for (int i = 0; i < 10_000; i++) {
        Object statement = new Object();
        cache.put(statement, Boolean.TRUE);
        if (i % 1000 == 0) {
          live.add(statement); // a few stay in use
        }
      }
      System.gc();
      Thread.sleep(20);
      cache.computeIfAbsent(new Object(), k -> Boolean.FALSE); // the next put expunges what the GC cleared
      max = Math.max(max, cache.size());
    }
    // 200,000 keys went through; after each round's GC only the live ones (200) and a round's worth at most remain.
    assertThat(cache.size()).isLessThan(10_000 + live.size() + 100);
    assertThat(max).isLessThan(2 * 10_000 + live.size());
    for (Object o : live) {
      assertThat(cache.get(o)).isTrue();
    }
  }

  /** Statements prepared once and executed for ever: reads alone drop the entries of collected keys. */
  @Test
  void readsAloneExpungeToo() throws Exception {
    WeakIdentityCache<Object, Boolean> cache = new WeakIdentityCache<>();
    Object live = new Object();
    cache.put(live, Boolean.TRUE);
    for (int i = 0; i < 10_000; i++) {
      cache.put(new Object(), Boolean.TRUE);
    }
    for (int i = 0; i < 50 && cache.sizeWithoutExpunging() > 100; i++) {
      System.gc();
      Thread.sleep(20);
      assertThat(cache.get(live)).isTrue();
    }
    assertThat(cache.sizeWithoutExpunging()).isLessThan(100);
  }

  @Test
  void concurrentUseFromManyThreadsKeepsEveryLiveEntry() throws Exception {
    WeakIdentityCache<Object, Integer> cache = new WeakIdentityCache<>();
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int t = 0; t < 4; t++) {
      Thread th = new Thread(() -> {
        try {
          List<Object> mine = new ArrayList<>();
          for (int i = 0; i < 20_000; i++) {
            Object k = new Object();
            cache.put(k, i);
            if (i % 100 == 0) {
              mine.add(k);
            }
            assertThat(cache.get(k)).isEqualTo(i);
          }
          for (int i = 0; i < mine.size(); i++) {
            assertThat(cache.get(mine.get(i))).isEqualTo(i * 100);
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      });
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join();
    }
    assertThat(failures).isEmpty();
  }
}
