package dev.fencing.agent.instrumentation.redisson;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The capture hooks against the real jars of the tested Redisson (3.52.0): the fenced lock's two acquisition scripts
 * and five token-returning lock calls, the inherited blocking lock calls (four lock, three tryLock), the unlock and the
 * watchdog's round, and all of them weave. A release that renames one of these methods or a field the advice reads
 * ({@code name}, the watchdog's {@code name2entry} and {@code internalLockLeaseTime}) fails here, not in production.
 */
class RedissonRangeTest {
  @Test
  void theHooksSelectTheFencedLockItsBaseClassesAndTheWatchdogAndTheirAdviceWeaves() throws Exception {
    String pkg = RedissonInstrumentationModule.PKG;
    assertThat(LibraryCheck.advised(new RedissonInstrumentationModule(), LibraryCheck.versionJars("redisson", "latest")))
        .containsOnly(Map.entry(pkg + ".RedissonFencedLock", 7), Map.entry(pkg + ".RedissonLock", 7),
            Map.entry(pkg + ".RedissonBaseLock", 1), Map.entry(pkg + ".renewal.RenewalTask", 1));
  }
}
