package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's configuration reference is the table the code prints: they cannot drift apart. */
class ConfigReferenceTest {
  @Test
  void readmeCarriesTheConfigurationReferenceOfTheCode() throws Exception {
    String readme = Files.readString(Path.of("../../README.md"));
    assertThat(readme)
        .as("README.md must contain the output of `java -jar fencing-agent.jar config` verbatim")
        .contains(ConfigKey.markdownTable());
  }
}
