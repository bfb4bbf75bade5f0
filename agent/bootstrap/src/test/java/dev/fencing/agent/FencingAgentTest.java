package dev.fencing.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class FencingAgentTest {
  /** The arguments premain reads to tell whether the OpenTelemetry agent comes too: those the JDK reports. */
  @Test
  void theCommandLineIsTheOneTheJdkReports() {
    assertThat(FencingAgent.commandLine()).containsExactly(ProcessHandle.current().info().arguments().orElseThrow());
  }

  @Test
  void argumentsFollowTheExecutableInANulSeparatedCommandLine() {
    byte[] cmdline = "/usr/bin/java\0-javaagent:/opt/opentelemetry-javaagent.jar\0\0-cp\0app é.jar\0Main\0"
        .getBytes(StandardCharsets.UTF_8);
    assertThat(FencingAgent.arguments(cmdline))
        .containsExactly("-javaagent:/opt/opentelemetry-javaagent.jar", "", "-cp", "app é.jar", "Main");
    assertThat(FencingAgent.arguments("/usr/bin/java\0".getBytes(StandardCharsets.UTF_8))).isEmpty();
  }
}
