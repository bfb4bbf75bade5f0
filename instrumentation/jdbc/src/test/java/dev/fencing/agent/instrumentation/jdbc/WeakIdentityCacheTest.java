package dev.fencing.agent.instrumentation.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.WeakIdentityCache;
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
}
