package dev.fencing.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.api.RejectionCounters;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.status.BuildInfo;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenStateFixtures;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The Prometheus registry is built at the first scrape, not at start (BENCHMARKS.md 9b: Micrometer and the Prometheus
 * client are some hundreds of classes that would load while the application starts), and a scrape shows every series
 * added before or after it.
 */
class OnDemandMetricsTest {
  private final TokenState state = TokenStateFixtures.onClock("ledger", 1000, () -> 5_000_000_000L);
  private final List<FencingSeries.Series> series = FencingSeries.of(state, new SideEffectCounters(),
      new RejectionCounters(), new BuildInfo("1.2.3", "17.0.9+9", "etcd"), true);
  private final AtomicInteger built = new AtomicInteger();
  private final OnDemandMetrics metrics = new OnDemandMetrics(series, s -> {
    built.incrementAndGet();
    return new AgentMetrics(s, new CoordinatorLatency("ledger"));
  });

  @Test
  void noRegistryUntilTheFirstScrapeThenOne() {
    metrics.add(List.of());
    assertThat(built).hasValue(0);

    String first = metrics.scrape();
    metrics.scrape();

    assertThat(built).hasValue(1);
    assertThat(first).contains("fencing_lease_held{lock=\"ledger\"}")
        .contains("fencing_coordinator_request_duration_seconds_bucket{");
  }

  @Test
  void seriesAddedBeforeOrAfterTheFirstScrapeAreExposed() {
    TokenState other = TokenStateFixtures.onClock("captured-a", 1000, () -> 5_000_000_000L);
    metrics.add(leaseHeld(other));
    assertThat(metrics.scrape()).contains("lock=\"captured-a\"");

    TokenState later = TokenStateFixtures.onClock("captured-b", 1000, () -> 5_000_000_000L);
    metrics.add(leaseHeld(later));
    assertThat(metrics.scrape()).contains("lock=\"captured-a\"").contains("lock=\"captured-b\"");
    assertThat(built).hasValue(1);
  }

  /** Only the lease-held gauge of {@code state}'s lock: a second build-info series would be a duplicate. */
  private static List<FencingSeries.Series> leaseHeld(TokenState state) {
    return FencingSeries.of(state, new SideEffectCounters(), new RejectionCounters(),
        new BuildInfo("1.2.3", "17.0.9+9", "etcd"), true).stream()
        .filter(s -> s.name().equals("fencing_lease_held")).toList();
  }
}
