package dev.fencing.agent.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.util.List;
import java.util.function.DoubleSupplier;

/**
 * The Prometheus exposition of {@link FencingSeries}, in a Micrometer registry of the agent's own (never the
 * application's global registry). Nothing is pushed from the hot path: meters read the state when scraped.
 */
public final class AgentMetrics {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  /** Held so the value suppliers (which Micrometer references weakly) live as long as the registry. */
  private final List<FencingSeries.Series> series = new java.util.concurrent.CopyOnWriteArrayList<>();

  public AgentMetrics(List<FencingSeries.Series> series) {
    this(series, List.of());
  }

  /** With {@code latency}, also {@code fencing_coordinator_request_duration_seconds} (a classic histogram). */
  public AgentMetrics(List<FencingSeries.Series> series, CoordinatorLatency latency) {
    this(series, latency == null ? List.of() : List.of(latency));
  }

  /** With one {@code fencing_coordinator_request_duration_seconds} histogram per lock of {@code latencies}. */
  public AgentMetrics(List<FencingSeries.Series> series, List<CoordinatorLatency> latencies) {
    if (!latencies.isEmpty()) {
      // Micrometer's Timer would add a _max gauge and its own bucket choice; a collector of our own exposes exactly
      // the buckets CoordinatorLatency keeps, in the same scrape.
      registry.getPrometheusRegistry().register(histogram(List.copyOf(latencies)));
    }
    add(series);
  }

  /** Exposes {@code more} from the next scrape on (the series of a lock captured after start). */
  public void add(List<FencingSeries.Series> more) {
    series.addAll(more);
    for (FencingSeries.Series s : more) {
      for (FencingSeries.Point p : s.points()) {
        String[] tags = p.labels().toArray(new String[0]);
        if (s.name().endsWith(INFO)) {
          // Prometheus' naming reserves _info for info metrics; a Micrometer gauge would lose the suffix.
          registry.getPrometheusRegistry().register(info(s, p));
        } else if (s.kind() == FencingSeries.Kind.GAUGE) {
          Gauge.builder(s.name(), p.asDouble(), DoubleSupplier::getAsDouble).description(s.help()).baseUnit(s.unit())
              .tags(tags).strongReference(true).register(registry);
        } else {
          FunctionCounter.builder(s.name(), p.asDouble(), DoubleSupplier::getAsDouble).description(s.help())
              .baseUnit(s.unit()).tags(tags).register(registry);
        }
      }
    }
  }

  private static final String INFO = "_info";

  /** An info metric: constant 1, the labels are the information (fencing_build_info). */
  private static Collector info(FencingSeries.Series s, FencingSeries.Point p) {
    String name = s.name().substring(0, s.name().length() - INFO.length());
    InfoSnapshot snapshot = InfoSnapshot.builder().name(name).help(s.help())
        .dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder().labels(Labels.of(p.labels().toArray(new String[0])))
            .build())
        .build();
    return new Collector() {
      @Override
      public MetricSnapshot collect() {
        return snapshot;
      }

      @Override
      public String getPrometheusName() {
        return s.name();
      }
    };
  }

  private static Collector histogram(List<CoordinatorLatency> latencies) {
    double[] bounds = CoordinatorLatency.bounds();
    double[] upper = java.util.Arrays.copyOf(bounds, bounds.length + 1);
    upper[bounds.length] = Double.POSITIVE_INFINITY;
    return new Collector() {
      @Override
      public MetricSnapshot collect() {
        HistogramSnapshot.Builder b = HistogramSnapshot.builder().name(CoordinatorLatency.NAME).help(CoordinatorLatency.HELP);
        for (CoordinatorLatency latency : latencies) {
          for (CoordinatorLatency.Op op : CoordinatorLatency.Op.values()) {
            b.dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder()
                .classicHistogramBuckets(ClassicHistogramBuckets.of(upper, latency.counts(op)))
                .sum(latency.sum(op))
                .labels(Labels.of("lock", latency.lock(), "op", op.label()))
                .build());
          }
        }
        return b.build();
      }

      @Override
      public String getPrometheusName() {
        return CoordinatorLatency.NAME;
      }
    };
  }

  public List<FencingSeries.Series> series() {
    return List.copyOf(series);
  }

  /** The Prometheus text exposition. */
  public String scrape() {
    return registry.scrape();
  }
}
