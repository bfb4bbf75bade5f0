package dev.fencing.agent.instrumentation.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import java.util.List;
import org.junit.jupiter.api.Test;

/** fencing.exempt.kafka: exempt topics pass untagged and are counted, without asking the policy. */
class KafkaExemptionTest {
  private final SideEffectCounters counters = new SideEffectCounters();
  private final KafkaFencing kafka =
      new KafkaFencing(List.of("ledger-*", "audit"), List.of("ledger-heartbeats", "metrics.*"), counters, "ledger");

  @Test
  void exemptNamesAndGlobsWinOverFencedOnes() {
    assertThat(kafka.route("ledger-heartbeats")).isEqualTo(KafkaFencing.Route.EXEMPT);
    assertThat(kafka.route("metrics.jvm")).isEqualTo(KafkaFencing.Route.EXEMPT);
    assertThat(kafka.route("ledger-events")).isEqualTo(KafkaFencing.Route.FENCED);
    assertThat(kafka.route("audit")).isEqualTo(KafkaFencing.Route.FENCED);
    assertThat(kafka.route("payments")).isEqualTo(KafkaFencing.Route.OPEN);
    assertThat(kafka.route(null)).isEqualTo(KafkaFencing.Route.OPEN);
    assertThat(kafka.fenced("ledger-heartbeats")).isFalse();
  }

  @Test
  void aRecordToAnExemptTopicPassesUntaggedAndIsCountedAsExempt() {
    // No policy is installed in this JVM: an exempt topic must not need one.
    Decision d = kafka.decide("metrics.jvm");
    assertThat(d.kind()).isEqualTo(Decision.Kind.PASS);
    assertThat(d.lock()).isEqualTo("ledger");
    assertThat(kafka.decide("metrics.gc")).isSameAs(d);
    assertThat(counters.count(Channel.KAFKA, false, SideEffectCounters.Outcome.EXEMPT)).isEqualTo(2);
  }

  @Test
  void bufferedRecordsToAnExemptTopicAreNeverJudgedAgain() {
    assertThat(kafka.buffered(null, true)).isNull();
    assertThat(kafka.expireHeld(null)).isNull();
  }
}
