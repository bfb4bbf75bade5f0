package dev.fencing.agent.outbox;

import dev.fencing.agent.metrics.FencingSeries;
import dev.fencing.outbox.RelayMetrics;
import java.util.ArrayList;
import java.util.List;

/**
 * An in-agent relay's {@link RelayMetrics} as the agent's series, so that its endpoint and OTLP export carry the
 * {@code fencing_outbox_*} series under the names, labels and help texts of the standalone relay's
 * {@code --metrics-port}. Bounded: one {@code table} label per relay of {@code fencing.outbox.table}, two channels,
 * five outcomes. Every value is read from the relay's counters when collected.
 */
final class RelaySeries {
  private static final String SECONDS = "_seconds";
  private static final String TOTAL = "_total";

  private RelaySeries() {}

  /** {@code fencing_outbox_deliveries_total{table,channel,outcome}}, every combination from 0. */
  static List<FencingSeries.Series> deliveries(RelayMetrics m) {
    List<FencingSeries.Point> points = new ArrayList<>();
    for (String channel : RelayMetrics.CHANNELS) {
      for (RelayMetrics.Outcome o : RelayMetrics.Outcome.values()) {
        points.add(count(() -> m.deliveries(channel, o), "table", m.table(), "channel", channel, "outcome", o.label()));
      }
    }
    return List.of(new FencingSeries.Series(strip(RelayMetrics.DELIVERIES, TOTAL), FencingSeries.Kind.COUNTER, null,
        RelayMetrics.DELIVERIES_HELP, List.copyOf(points)));
  }

  /**
   * The table's gauges (pending, age of the oldest pending, parked): to be exposed once the relay has read the table
   * ({@link RelayMetrics#pending()} no longer -1), as the standalone relay shows them only from then on.
   */
  static List<FencingSeries.Series> table(RelayMetrics m) {
    String t = m.table();
    return List.of(
        new FencingSeries.Series(RelayMetrics.PENDING, FencingSeries.Kind.GAUGE, null, RelayMetrics.PENDING_HELP,
            List.of(count(m::pending, "table", t))),
        new FencingSeries.Series(strip(RelayMetrics.OLDEST_PENDING_AGE, SECONDS), FencingSeries.Kind.GAUGE, "seconds",
            RelayMetrics.OLDEST_PENDING_AGE_HELP,
            List.of(new FencingSeries.Point(List.of("table", t), m::oldestPendingAgeSeconds, null))),
        new FencingSeries.Series(RelayMetrics.PARKED, FencingSeries.Kind.GAUGE, null, RelayMetrics.PARKED_HELP,
            List.of(count(m::parked, "table", t))));
  }

  private static FencingSeries.Point count(java.util.function.LongSupplier value, String... labels) {
    return new FencingSeries.Point(List.of(labels), () -> value.getAsLong(), value);
  }

  private static String strip(String name, String suffix) {
    if (!name.endsWith(suffix)) {
      throw new IllegalStateException(name + " does not end with " + suffix);
    }
    return name.substring(0, name.length() - suffix.length());
  }
}
