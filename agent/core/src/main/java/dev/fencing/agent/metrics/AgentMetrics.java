package dev.fencing.agent.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import java.util.function.DoubleSupplier;

/**
 * The Prometheus exposition of {@link FencingSeries}, in a Micrometer registry of the agent's own (never the
 * application's global registry). Nothing is pushed from the hot path: meters read the state when scraped.
 */
public final class AgentMetrics {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  /** Held so the value suppliers (which Micrometer references weakly) live as long as the registry. */
  private final List<FencingSeries.Series> series;

  public AgentMetrics(List<FencingSeries.Series> series) {
    this.series = series;
    for (FencingSeries.Series s : series) {
      for (FencingSeries.Point p : s.points()) {
        String[] tags = p.labels().toArray(new String[0]);
        if (s.kind() == FencingSeries.Kind.GAUGE) {
          Gauge.builder(s.name(), p.asDouble(), DoubleSupplier::getAsDouble).description(s.help()).baseUnit(s.unit())
              .tags(tags).strongReference(true).register(registry);
        } else {
          FunctionCounter.builder(s.name(), p.asDouble(), DoubleSupplier::getAsDouble).description(s.help())
              .baseUnit(s.unit()).tags(tags).register(registry);
        }
      }
    }
  }

  public List<FencingSeries.Series> series() {
    return series;
  }

  /** The Prometheus text exposition. */
  public String scrape() {
    return registry.scrape();
  }
}
