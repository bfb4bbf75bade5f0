package dev.fencing.agent.instrumentation.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KafkaFencingTest {
  @ParameterizedTest
  @CsvSource({
      "ledger, ledger, true",
      "ledger, ledger2, false",
      "ledger-*, ledger-, true",
      "ledger-*, ledger-events, true",
      "ledger-*, ledger, false",
      "*-fenced, orders-fenced, true",
      "*-fenced, orders-fenced-not, false",
      "a*b*c, abc, true",
      "a*b*c, axxbyyc, true",
      "a*b*c, axxbyy, false",
      "a*b*c, acb, false",
      "*, anything, true",
      "a**, a, true",
      "Ledger*, ledger, false",
  })
  void globsMatchAnyRunOfCharactersAtStars(String glob, String topic, boolean matches) {
    assertThat(KafkaFencing.globMatches(glob, topic)).isEqualTo(matches);
  }

  @Test
  void exactNamesAndGlobsMakeATopicFenced() {
    KafkaFencing k = new KafkaFencing(List.of("ledger", "audit.*"));

    assertThat(k.fenced("ledger")).isTrue();
    assertThat(k.fenced("audit.2026")).isTrue();
    assertThat(k.fenced("ledger-events")).isFalse();
    assertThat(k.fenced("audit")).isFalse();
    assertThat(new KafkaFencing(List.of()).fenced("ledger")).isFalse();
  }
}
