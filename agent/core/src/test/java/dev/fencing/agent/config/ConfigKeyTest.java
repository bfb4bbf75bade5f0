package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Each key is defined once in ConfigKey: the default the reference documents is the value the agent uses. */
class ConfigKeyTest {
  @Test
  void everyDocumentedLiteralDefaultIsTheEffectiveValueOfAnEmptyConfiguration() {
    AgentConfig config = ConfigLoader.load("lock=l", new Properties(), Map.of());
    assertThat(config.problems()).isEmpty();
    for (ConfigKey k : ConfigKey.values()) {
      if (k == ConfigKey.LOCK || k == ConfigKey.INSTRUMENTATION_ENABLED || k == ConfigKey.HOLDER_ID) {
        continue; // set above; per instrumentation; computed from the host (documented as hostname/pid)
      }
      String shown = config.display(k);
      if (k.defaultText().startsWith("(")) {
        assertThat(shown).as(k.property()).isIn("(none)", "off", "", "10s"); // 10s: jdbc idle timeout = the TTL
      } else {
        // the documented default, set explicitly, is what the agent uses when nothing is set
        AgentConfig explicit = ConfigLoader.load("lock=l," + k.key() + "=" + k.defaultText(), new Properties(), Map.of());
        assertThat(explicit.problems()).as(k.property()).isEmpty();
        assertThat(shown).as(k.property()).isEqualTo(explicit.display(k));
      }
    }
  }
}
