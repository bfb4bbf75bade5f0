package dev.fencing.agent.instrumentation.jetcdlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The capture hooks against the real jars of the tested jetcd: LockImpl gets the lock and unlock advice, LeaseImpl
 * the grant advice (both overloads), its keepalive loop the send and reply advice, and all of them weave. A release
 * that renames one of these methods fails here, not in production.
 */
class JetcdLockRangeTest {
  @Test
  void theHooksSelectLockLeaseAndKeepAliveAndTheirAdviceWeaves() throws Exception {
    Path dir = Path.of(System.getProperty("fencing.test.jetcd.jars"), "latest");
    List<Path> jars;
    try (Stream<Path> files = Files.list(dir)) {
      jars = files.filter(f -> f.toString().endsWith(".jar")).toList();
    }
    String impl = JetcdLockInstrumentationModule.IMPL;
    assertThat(LibraryCheck.advised(new JetcdLockInstrumentationModule(), jars)).containsOnly(
        Map.entry(impl + ".LockImpl", 2), Map.entry(impl + ".LeaseImpl", 2), Map.entry(impl + ".LeaseImpl$KeepAlive", 2));
  }
}
