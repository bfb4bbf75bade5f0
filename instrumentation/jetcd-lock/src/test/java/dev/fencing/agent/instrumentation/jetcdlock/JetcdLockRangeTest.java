package dev.fencing.agent.instrumentation.jetcdlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The capture hooks against the real jars of the oldest and the latest supported jetcd (0.7.7, 0.8.6): LockImpl gets
 * the lock and unlock advice, ElectionImpl the campaign and resign advice, LeaseImpl the grant advice (both
 * overloads), its keepalive loop the send and reply advice, and all of them weave. A release that renames one of these
 * methods fails here, not in production.
 */
class JetcdLockRangeTest {
  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void theHooksSelectLockElectionLeaseAndKeepAliveAndTheirAdviceWeaves(String end) throws Exception {
    String impl = JetcdLockInstrumentationModule.IMPL;
    assertThat(LibraryCheck.advised(new JetcdLockInstrumentationModule(), LibraryCheck.versionJars("jetcd", end))).containsOnly(
        Map.entry(impl + ".LockImpl", 2), Map.entry(impl + ".ElectionImpl", 2), Map.entry(impl + ".LeaseImpl", 2),
        Map.entry(impl + ".LeaseImpl$KeepAlive", 2));
  }
}
