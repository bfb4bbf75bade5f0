package dev.fencing.agent.instrumentation.curator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The capture hooks against the real jars of the oldest and the latest supported Curator (5.2.0, 5.9.0) and a
 * ZooKeeper client: LockInternals gets the acquisition and release advice (which read its fields {@code client} and
 * {@code basePath}), InterProcessSemaphoreV2 the acquire and returnLease advice ({@code client}, {@code leasesPath},
 * {@code maxLeases}), InterProcessSemaphoreMutex the release advice ({@code lease}), LeaderLatch the leadership advice
 * ({@code hasLeadership}, {@code client}, {@code latchPath}, {@code ourPath}, {@code state}), LeaderSelector its
 * {@code doWork} and {@code close} advice, and all of them weave.
 * A release that renames one of them fails here, not in production. Nothing of the ZooKeeper client is advised: the
 * syncs that keep a captured lock trusted are sent through its public API.
 */
class CuratorRangeTest {
  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void theHooksSelectTheLockRecipesAndTheirAdviceWeaves(String end) throws Exception {
    assertThat(LibraryCheck.advised(new CuratorInstrumentationModule(), LibraryCheck.versionJars("curator", end))).containsOnly(
        Map.entry(LockInternalsInstrumentation.CLASS, 2),
        Map.entry(CuratorInstrumentationModule.SEMAPHORE, 2), Map.entry(CuratorInstrumentationModule.SEMAPHORE_MUTEX, 1),
        Map.entry(CuratorInstrumentationModule.LEADER_LATCH, 1),
        Map.entry(CuratorInstrumentationModule.LEADER_SELECTOR, 2));
  }
}
