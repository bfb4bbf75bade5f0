package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.protocol.Rejection;
import java.util.List;
import org.junit.jupiter.api.Test;

class FenceMetricsTest {

  @Test
  void everyLockAndReasonStartsAtZeroInPrometheusText() {
    FenceMetrics m = new FenceMetrics("http", List.of("ledger"));
    m.increment("ledger", Rejection.STALE_TOKEN);
    m.increment(null, Rejection.MISSING_TOKEN);
    String text = m.prometheusText();
    assertThat(text).startsWith("# HELP fencing_fence_rejections_total ")
        .contains("# TYPE fencing_fence_rejections_total counter\n")
        .contains("fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"stale_token\"} 1\n")
        .contains("fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"missing_token\"} 1\n")
        .contains("fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"malformed_token\"} 0\n")
        .contains("reason=\"unknown_lock\"} 0\n").contains("reason=\"store_unavailable\"} 0\n")
        .contains("reason=\"drain_timeout\"} 0\n").contains("reason=\"replayed_token\"} 0\n");
    assertThat(text.lines().filter(l -> !l.startsWith("#"))).hasSize(Rejection.values().length);
    assertThat(m.samples()).extracting(FenceMetrics.Sample::reason)
        .containsExactly("stale_token", "missing_token", "malformed_token", "unknown_lock", "store_unavailable",
            "drain_timeout", "missing_signature", "bad_signature", "replayed_token");
  }

  @Test
  void severalLocksShareAnUnknownLockSeriesForRequestsNamingNone() {
    FenceMetrics m = new FenceMetrics("http", List.of("ledger", "billing"));
    m.increment(null, Rejection.UNKNOWN_LOCK);
    assertThat(m.count(FenceMetrics.UNKNOWN_LOCK, Rejection.UNKNOWN_LOCK)).isEqualTo(1);
    assertThat(m.samples()).extracting(FenceMetrics.Sample::lock).containsOnly("ledger", "billing", "(unknown)");
    assertThat(m.samples()).hasSize(3 * Rejection.values().length);
  }
}
