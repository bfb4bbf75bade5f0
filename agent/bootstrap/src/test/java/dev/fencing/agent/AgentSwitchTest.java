package dev.fencing.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AgentSwitchTest {
  /** A tool whose module every JVM's boot layer has (keytool's java.base): this test's JVM runs no tool. */
  private static final String KEYTOOL = "java.base/sun.security.tools.keytool.Main -list";
  private static final String APP = "com.acme.Main";
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private PrintStream saved;

  @BeforeEach
  void captureStandardError() {
    saved = System.err;
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void restoreStandardError() {
    System.setErr(saved);
  }

  private static AgentSwitch of(String args, Map<String, String> env) {
    return new AgentSwitch(new EarlySettings(args, new Properties(), env));
  }

  private String logged() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void offSaysWhyInOneInfoLineAlsoWhenAttachedLater() {
    assertThat(of("lock=a", Map.of("FENCING_ENABLED", "false")).stayOut(false, APP, null)).isTrue();
    assertThat(of("lock=a,enabled=False", Map.of()).stayOut(true, APP, null)).isTrue();
    assertThat(logged()).isEqualTo("[fencing-agent] INFO off (fencing.enabled=false, environment variable"
        + " FENCING_ENABLED): the agent leaves this JVM untouched" + System.lineSeparator()
        + "[fencing-agent] INFO off (fencing.enabled=false, agent argument enabled): the agent leaves this JVM"
        + " untouched" + System.lineSeparator());
  }

  @Test
  void offIsSilentAtWarn() {
    assertThat(of("enabled=false,log.level=warn", Map.of()).stayOut(false, APP, null)).isTrue();
    assertThat(logged()).isEmpty();
  }

  @Test
  void aJdkToolIsLeftQuietlyUnlessOptedIn() {
    assertThat(of("lock=a", Map.of()).stayOut(false, KEYTOOL, null)).isTrue();
    assertThat(logged()).as("at the default level").isEmpty();
    assertThat(of("lock=a,log.level=debug", Map.of()).stayOut(false, KEYTOOL, null)).isTrue();
    assertThat(logged()).isEqualTo("[fencing-agent] DEBUG FencingAgent: not started in the JDK tool"
        + " java.base/sun.security.tools.keytool.Main (fencing.jdk-tools.enabled=true starts it)" + System.lineSeparator());
    assertThat(of("lock=a,jdk-tools.enabled=true", Map.of()).stayOut(false, KEYTOOL, null)).isFalse();
  }

  @Test
  void anExplicitAttachOrAnApplicationStarts() {
    assertThat(of("lock=a", Map.of()).stayOut(true, KEYTOOL, null)).isFalse();
    assertThat(of("lock=a,enabled=true", Map.of()).stayOut(false, APP, null)).isFalse();
    assertThat(of("lock=a,enabled=banana", Map.of()).stayOut(false, APP, null)).as("the core reports it").isFalse();
    assertThat(logged()).isEmpty();
  }
}
