package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The configuration reference page is the table the code prints: they cannot drift apart. */
class ConfigReferenceTest {
  @Test
  void referencePageCarriesTheConfigurationReferenceOfTheCode() throws Exception {
    String page = Files.readString(Path.of("../../docs/reference/configuration.md"));
    assertThat(page)
        .as("docs/reference/configuration.md must contain the output of `java -jar fencing-agent.jar config` verbatim")
        .contains(ConfigKey.markdownTable());
  }
}
