package dev.fencing.agent.instrumentation.curator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The capture hooks against the real jars of the tested Curator and its ZooKeeper client: LockInternals gets the
 * acquisition and release advice (which read its fields {@code client} and {@code basePath}), the client's
 * SendThread the ping advice (which reads {@code lastPingSentNs} and its outer ClientCnxn), and both weave. A release
 * that renames one of them fails here, not in production.
 */
class CuratorRangeTest {
  @Test
  void theHooksSelectLockInternalsAndTheSendThreadAndTheirAdviceWeaves() throws Exception {
    Path dir = Path.of(System.getProperty("fencing.test.curator.jars"), "latest");
    List<Path> jars;
    try (Stream<Path> files = Files.list(dir)) {
      jars = files.filter(f -> f.toString().endsWith(".jar")).toList();
    }
    assertThat(LibraryCheck.advised(new CuratorInstrumentationModule(), jars)).containsOnly(
        Map.entry(LockInternalsInstrumentation.CLASS, 2), Map.entry(SendThreadInstrumentation.CLASS, 1));
  }
}
