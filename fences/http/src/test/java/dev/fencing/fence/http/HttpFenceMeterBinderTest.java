package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.InMemoryFenceStore;
import dev.fencing.protocol.Rejection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

class HttpFenceMeterBinderTest {

  @Test
  void oneDottedNameThatEachRegistryRendersInItsOwnStyle() {
    HttpFence fence = new HttpFence(FencePolicy.forLocks("ledger").build(), new InMemoryFenceStore());
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    SimpleMeterRegistry simple = new SimpleMeterRegistry();
    HttpFenceMeterBinder binder = new HttpFenceMeterBinder(fence);
    binder.bindTo(prometheus);
    binder.bindTo(simple);

    assertThat(fence.decide("POST", "/x", List.of("7"), List.of("ledger")).isAdmitted()).isTrue();
    assertThat(fence.decide("POST", "/x", List.of("5"), List.of("ledger")).isRejected()).isTrue();
    assertThat(fence.decide("POST", "/x", List.of("5"), List.of("ledger")).isRejected()).isTrue();

    assertThat(prometheus.scrape()).contains(
        "# TYPE fencing_fence_rejections_total counter",
        "fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"stale_token\"} 2.0",
        "fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"drain_timeout\"} 0.0");
    assertThat(simple.getMeters()).hasSize(Rejection.values().length)
        .allMatch(m -> m.getId().getName().equals("fencing.fence.rejections"));
    assertThat(simple.get("fencing.fence.rejections").tags("fence", "http", "lock", "ledger", "reason", "stale_token")
        .functionCounter().count()).isEqualTo(2.0);
  }

  @Test
  void severalLocksAndSeveralFencesEachKeepTheirSeries() {
    FenceMetrics a = new FenceMetrics("http", List.of("ledger", "billing"));
    FenceMetrics b = new FenceMetrics("http", List.of("audit"));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new HttpFenceMeterBinder(a, b).bindTo(registry);
    b.increment("audit", Rejection.MISSING_TOKEN);
    assertThat(registry.getMeters()).hasSize(4 * Rejection.values().length);
    assertThat(registry.get("fencing.fence.rejections").tags("lock", "audit", "reason", "missing_token")
        .functionCounter().count()).isEqualTo(1.0);
    assertThat(registry.find("fencing.fence.rejections").tag("lock", "(unknown)").meters()).isNotEmpty();
  }
}
