package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {
  @ParameterizedTest
  @CsvSource({"500ms, PT0.5S", "10s, PT10S", "2m, PT2M", "1h, PT1H", "0s, PT0S", "1500ms, PT1.5S", "90s, PT1M30S"})
  void parsesEachUnit(String text, Duration expected) {
    assertThat(Durations.parse(text)).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource({"' 10s ', PT10S", "10S, PT10S", "10 s, PT10S", "250MS, PT0.25S"})
  void parsingIgnoresCaseAndSurroundingSpaces(String text, Duration expected) {
    assertThat(Durations.parse(text)).isEqualTo(expected);
  }

  @ParameterizedTest
  @ValueSource(strings = {"500ms", "10s", "2m", "1h", "0s", "1500ms", "90s", "61m", "25h"})
  void formatIsTheInverseOfParse(String text) {
    assertThat(Durations.format(Durations.parse(text))).isEqualTo(text);
  }

  @ParameterizedTest
  @CsvSource({"PT60S, 1m", "PT3600S, 1h", "PT120M, 2h", "PT1.5S, 1500ms", "PT0S, 0s"})
  void formatPicksTheLargestExactUnit(Duration duration, String expected) {
    assertThat(Durations.format(duration)).isEqualTo(expected);
  }

  @ParameterizedTest
  @ValueSource(strings = {"PT0S", "PT0.000000001S", "PT1S", "PT3S", "PT0.5S", "PT1.000000003S", "PT2.999999999S",
      "PT24H", "PT86399.999999999S"})
  void halfIsDividedByTwo(Duration d) {
    assertThat(Durations.half(d)).isEqualTo(d.dividedBy(2));
  }

  @ParameterizedTest
  @ValueSource(strings = {"banana", "10", "-1s", "", "s", "10x", "1.5s", "1d", "1234567890123s", "\u0661\u0660s", "+5s"})
  void rejectsAnythingElse(String text) {
    assertThatIllegalArgumentException().isThrownBy(() -> Durations.parse(text));
  }
}
