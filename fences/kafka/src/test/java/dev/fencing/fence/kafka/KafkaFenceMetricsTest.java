package dev.fencing.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.protocol.Rejection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

class KafkaFenceMetricsTest {

  @Test
  void everyRegisteredLockStartsAtZeroForEveryReasonAndOutcome() {
    KafkaFenceMetrics m = new KafkaFenceMetrics();
    m.register("ledger");
    m.reject("ledger", Rejection.STALE_TOKEN);
    m.reject("ledger", Rejection.STALE_TOKEN);
    m.deadLetter("ledger", false);
    m.duplicate("ledger");
    assertThat(m.prometheusText()).isEqualTo("""
        # HELP fencing_fence_rejections_total Requests, writes or records refused by a fence, by reason.
        # TYPE fencing_fence_rejections_total counter
        fencing_fence_rejections_total{fence="kafka",lock="ledger",reason="stale_token"} 2
        fencing_fence_rejections_total{fence="kafka",lock="ledger",reason="missing_token"} 0
        fencing_fence_rejections_total{fence="kafka",lock="ledger",reason="malformed_token"} 0
        fencing_fence_rejections_total{fence="kafka",lock="ledger",reason="unknown_lock"} 0
        fencing_fence_rejections_total{fence="kafka",lock="ledger",reason="store_unavailable"} 0
        fencing_fence_rejections_total{fence="kafka",lock="ledger",reason="missing_signature"} 0
        fencing_fence_rejections_total{fence="kafka",lock="ledger",reason="bad_signature"} 0
        fencing_fence_rejections_total{fence="kafka",lock="ledger",reason="replayed_token"} 0
        # HELP fencing_fence_dead_letters_total Records quarantined by the Kafka fence, by dead-letter outcome.
        # TYPE fencing_fence_dead_letters_total counter
        fencing_fence_dead_letters_total{fence="kafka",lock="ledger",outcome="sent"} 0
        fencing_fence_dead_letters_total{fence="kafka",lock="ledger",outcome="failed"} 1
        # HELP fencing_fence_duplicates_skipped_total Later copies of an outbox event the Kafka fence skipped.
        # TYPE fencing_fence_duplicates_skipped_total counter
        fencing_fence_duplicates_skipped_total{fence="kafka",lock="ledger"} 1
        # HELP fencing_fence_store_failures_total Kafka fence store calls that failed; the poll waited and retried.
        # TYPE fencing_fence_store_failures_total counter
        fencing_fence_store_failures_total{fence="kafka"} 0
        """);
  }

  @Test
  void theUnknownLockLabelIsUsedOnlyWithSeveralLocks() {
    assertThat(KafkaFenceMetrics.fallbackLabel(List.of("ledger"))).isEqualTo("ledger");
    assertThat(KafkaFenceMetrics.fallbackLabel(List.of("a", "b"))).isEqualTo("(unknown)");
  }

  @Test
  void theBinderRendersDottedNamesInEachRegistrysStyleAndReadsTheSameAdders() {
    KafkaFenceMetrics m = new KafkaFenceMetrics();
    m.register("ledger");
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    SimpleMeterRegistry simple = new SimpleMeterRegistry();
    KafkaFenceMeterBinder binder = new KafkaFenceMeterBinder(m);
    binder.bindTo(prometheus);
    binder.bindTo(simple);
    m.reject("ledger", Rejection.MALFORMED_TOKEN);
    m.deadLetter("ledger", true);
    m.duplicate("ledger");
    assertThat(prometheus.scrape()).contains(
        "fencing_fence_rejections_total{fence=\"kafka\",lock=\"ledger\",reason=\"malformed_token\"} 1.0",
        "fencing_fence_rejections_total{fence=\"kafka\",lock=\"ledger\",reason=\"stale_token\"} 0.0",
        "fencing_fence_dead_letters_total{fence=\"kafka\",lock=\"ledger\",outcome=\"sent\"} 1.0",
        "fencing_fence_store_failures_total{fence=\"kafka\"} 0.0",
        "fencing_fence_duplicates_skipped_total{fence=\"kafka\",lock=\"ledger\"} 1.0");
    assertThat(simple.get("fencing.fence.rejections").tags("lock", "ledger", "reason", "malformed_token")
        .functionCounter().count()).isEqualTo(1.0);
    assertThat(simple.getMeters()).extracting(meter -> meter.getId().getName()).containsOnly(
        "fencing.fence.rejections", "fencing.fence.dead.letters", "fencing.fence.store.failures",
        "fencing.fence.duplicates.skipped");
    assertThat(simple.getMeters()).hasSize(KafkaFenceMetrics.REASONS.size() + KafkaFenceMetrics.OUTCOMES.size() + 2);
  }

  @Test
  void aLockConfiguredAfterBindingGetsItsMetersThen() {
    KafkaFenceMetrics m = new KafkaFenceMetrics();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new KafkaFenceMeterBinder(m).bindTo(registry);
    assertThat(registry.find("fencing.fence.rejections").meters()).isEmpty();
    m.register("billing");
    m.reject("billing", Rejection.STALE_TOKEN);
    assertThat(registry.get("fencing.fence.rejections").tags("lock", "billing", "reason", "stale_token")
        .functionCounter().count()).isEqualTo(1.0);
    registry.close();
    m.register("later");
    assertThat(registry.find("fencing.fence.rejections").tag("lock", "later").meters()).isEmpty();
  }
}
