package dev.fencing.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.status.BuildInfo;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class CliVersionTest {
  private static String run(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int exit = Cli.run(args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    assertThat(exit).isZero();
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void versionPrintsTheBuildsVersionJavaAndCoordinatorOnOneLine() {
    String out = run("--version");
    assertThat(out).isEqualTo("fencing-agent " + BuildInfo.agentVersion() + " (java " + Runtime.version()
        + ", coordinator etcd)" + System.lineSeparator());
    assertThat(BuildInfo.agentVersion()).isNotEqualTo(BuildInfo.UNKNOWN);
  }

  @Test
  void helpListsVersion() {
    assertThat(run("--help")).contains("--version");
  }
}
