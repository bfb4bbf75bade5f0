package dev.fencing.agent.metrics;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The endpoint's {@link AgentMetrics}, built at the first scrape rather than at start. Micrometer's registry and the
 * Prometheus client load and initialise some hundreds of classes; at start they would take CPU from the application
 * while it starts (BENCHMARKS.md 9b), and nothing needs them before Prometheus first asks. The values cost nothing to
 * keep meanwhile: every series reads the agent's state when scraped, so the first scrape shows the same numbers an
 * eager registry would.
 */
public final class OnDemandMetrics {
  private final Function<List<FencingSeries.Series>, AgentMetrics> factory;
  private final List<FencingSeries.Series> series; // guarded by this
  private AgentMetrics metrics; // guarded by this; null until the first scrape

  /** The endpoint's registry: {@code series} and one coordinator histogram per lock of {@code latencies}. */
  public OnDemandMetrics(List<FencingSeries.Series> series, List<CoordinatorLatency> latencies) {
    this(series, s -> new AgentMetrics(s, latencies));
  }

  OnDemandMetrics(List<FencingSeries.Series> series, Function<List<FencingSeries.Series>, AgentMetrics> factory) {
    this.series = new ArrayList<>(series);
    this.factory = factory;
  }

  /** Exposes {@code more} from the next scrape on (the series of a lock captured after start). */
  public synchronized void add(List<FencingSeries.Series> more) {
    series.addAll(more);
    if (metrics != null) {
      metrics.add(more);
    }
  }

  /** The Prometheus text exposition; the first call builds the registry (scrapes come one at a time anyway). */
  public synchronized String scrape() {
    if (metrics == null) {
      metrics = factory.apply(List.copyOf(series));
    }
    return metrics.scrape();
  }
}
