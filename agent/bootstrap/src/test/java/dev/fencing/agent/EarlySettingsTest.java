package dev.fencing.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The settings premain reads before the core, from the core's sources in the core's order. */
class EarlySettingsTest {
  @Test
  void agentArgumentsWinOverPropertiesOverVariablesOverTheFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("fencing.properties");
    Files.writeString(file, "fencing.enabled=false\nlog.level=debug\n");
    Properties props = new Properties();
    props.setProperty("fencing.config.file", file.toString());
    props.setProperty("fencing.fail-mode", "open");
    Map<String, String> env = Map.of("FENCING_FAIL_MODE", "closed", "FENCING_JDK_TOOLS_ENABLED", "TRUE");

    EarlySettings s = new EarlySettings("lock=a,etcd.endpoints=http://e1:2379,http://e2:2379,fencing.enabled=true",
        props, env);
    assertThat(s.get("enabled").value).isEqualTo("true");
    assertThat(s.get("enabled").source).isEqualTo("agent argument enabled");
    assertThat(s.get("fail-mode").source).isEqualTo("system property fencing.fail-mode");
    assertThat(s.isTrue("jdk-tools.enabled")).isTrue();
    assertThat(s.get("jdk-tools.enabled").source).isEqualTo("environment variable FENCING_JDK_TOOLS_ENABLED");
    assertThat(s.get("log.level").value).isEqualTo("debug");
    assertThat(s.get("log.level").source).isEqualTo("file " + file + " key log.level");

    EarlySettings fromFile = new EarlySettings("lock=a", props, Map.of());
    assertThat(fromFile.isFalse("enabled")).isTrue();
    assertThat(fromFile.get("enabled").source).isEqualTo("file " + file + " key fencing.enabled");
  }

  @Test
  void theFileNamedByAVariableCounts(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("f.properties");
    Files.writeString(file, "enabled = FALSE\n");
    EarlySettings s = new EarlySettings(null, new Properties(), Map.of("FENCING_CONFIG_FILE", file.toString()));
    assertThat(s.isFalse("enabled")).isTrue();
  }

  @Test
  void malformedOrMissingValuesAreNeitherTrueNorFalse() {
    EarlySettings s = new EarlySettings("enabled=no,jdk-tools.enabled", new Properties(),
        Map.of("FENCING_CONFIG_FILE", "/nonexistent/fencing.properties"));
    assertThat(s.isFalse("enabled")).isFalse();
    assertThat(s.isTrue("enabled")).isFalse();
    assertThat(s.get("jdk-tools.enabled")).isNull();
    assertThat(s.get("log.level")).isNull();
  }
}
