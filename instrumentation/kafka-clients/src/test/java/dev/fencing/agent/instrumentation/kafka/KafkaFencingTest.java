package dev.fencing.agent.instrumentation.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
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
    if (glob.indexOf('*') >= 0) { // names without a star are exact names, matched by the set
      assertThat(new KafkaFencing.Glob(glob).matches(topic)).isEqualTo(matches);
    }
  }

  /** The compiled glob (prefix, middles, suffix) is the hot path; the backtracking matcher is its definition. */
  @Test
  void compiledGlobsAgreeWithTheReferenceMatcher() {
    Random random = new Random(9);
    for (int i = 0; i < 200_000; i++) {
      String glob = randomString(random, "ab*", 1 + random.nextInt(7));
      if (glob.indexOf('*') < 0) {
        glob = glob + "*";
      }
      String text = randomString(random, "ab", random.nextInt(9));
      assertThat(new KafkaFencing.Glob(glob).matches(text)).as("%s ~ %s", glob, text)
          .isEqualTo(KafkaFencing.globMatches(glob, text));
    }
  }

  private static String randomString(Random random, String alphabet, int length) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < length; i++) {
      b.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return b.toString();
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

  @Test
  void rememberedAnswersAreTheComputedOnesAndTheirNumberIsBounded() {
    KafkaFencing k = new KafkaFencing(List.of("ledger", "audit.*"));
    for (int round = 0; round < 2; round++) { // the second round is answered from memory
      assertThat(k.fenced("audit.2026")).isTrue();
      assertThat(k.fenced("ledger-events")).isFalse();
      assertThat(k.fenced("ledger")).isTrue();
    }
    assertThat(k.remembered()).isEqualTo(3);

    for (int i = 0; i < 3 * KafkaFencing.MAX_REMEMBERED; i++) {
      assertThat(k.fenced("audit." + i)).isTrue();
      assertThat(k.fenced("other." + i)).isFalse();
    }
    assertThat(k.remembered()).isEqualTo(KafkaFencing.MAX_REMEMBERED);
    assertThat(k.fenced("audit.late")).as("computed, not remembered").isTrue();
    assertThat(k.fenced("other.late")).isFalse();
  }
}
