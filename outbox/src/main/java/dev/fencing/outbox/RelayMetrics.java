package dev.fencing.outbox;

import dev.fencing.protocol.OutboxSchema;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The relay's metrics, in Prometheus text format (Micrometer's naming; no Micrometer needed): the table's pending
 * and parked events and the age of its oldest pending event (as the relay last read them), and this relay's
 * deliveries by channel and outcome. Labels are bounded: two channels, five outcomes. The agent exposes the same
 * series, from the same names and help texts, on its own endpoint and OTLP export.
 */
public final class RelayMetrics {
  /** Gauge {@code {table}}. */
  public static final String PENDING = "fencing_outbox_events_pending";
  public static final String PENDING_HELP = "Pending events in the outbox table.";
  /** Gauge {@code {table}}, in seconds. */
  public static final String OLDEST_PENDING_AGE = "fencing_outbox_oldest_pending_age_seconds";
  public static final String OLDEST_PENDING_AGE_HELP =
      "Age of the oldest pending event in the outbox table (database clock).";
  /** Gauge {@code {table}}. */
  public static final String PARKED = "fencing_outbox_events_parked";
  public static final String PARKED_HELP = "Parked events in the outbox table (delivery gave up; never dropped).";
  /** Counter {@code {table, channel, outcome}}. */
  public static final String DELIVERIES = "fencing_outbox_deliveries_total";
  public static final String DELIVERIES_HELP = "Delivery attempts of this relay by channel and outcome.";

  /** How a delivery ended, the {@code outcome} label. */
  public enum Outcome {
    /** The destination accepted it; the row is delivered. */
    DELIVERED,
    /** The attempt failed; the row is retried after a backoff. */
    FAILED,
    /** The attempts ran out, or the row cannot be delivered as written; the row is parked. */
    PARKED,
    /** A fence refused the row's token (409 with Fencing-Rejected); the row is parked. */
    REJECTED,
    /** The attempt ended after this relay's claim had expired and another relay claimed the row: not marked here. */
    CLAIM_LOST;

    /** The {@code outcome} label's value. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** The {@code channel} label's values. */
  public static final List<String> CHANNELS = List.of(OutboxSchema.CHANNEL_HTTP, OutboxSchema.CHANNEL_KAFKA);

  private final String table;
  private final AtomicLongArray deliveries = new AtomicLongArray(CHANNELS.size() * Outcome.values().length);
  private final AtomicLong pending = new AtomicLong(-1);
  private final AtomicLong parked = new AtomicLong(-1);
  private volatile double oldestPendingAgeSeconds;

  RelayMetrics(String table) {
    this.table = table;
  }

  void delivery(String channel, Outcome outcome) {
    int c = CHANNELS.indexOf(channel);
    if (c >= 0) {
      deliveries.incrementAndGet(c * Outcome.values().length + outcome.ordinal());
    }
  }

  void table(long pendingEvents, double oldestAgeSeconds, long parkedEvents) {
    pending.set(pendingEvents);
    oldestPendingAgeSeconds = oldestAgeSeconds;
    parked.set(parkedEvents);
  }

  /** The {@code table} label: the relay's table as it was given. */
  public String table() {
    return table;
  }

  /** Deliveries of this relay on a channel with an outcome, since it started. */
  public long deliveries(String channel, Outcome outcome) {
    int c = CHANNELS.indexOf(channel);
    return c < 0 ? 0 : deliveries.get(c * Outcome.values().length + outcome.ordinal());
  }

  /** Pending events in the table at the last read, -1 before the first. */
  public long pending() {
    return pending.get();
  }

  /** Parked events in the table at the last read, -1 before the first. */
  public long parked() {
    return parked.get();
  }

  /** The age of the oldest pending event at the last read (database clock), 0 when none is pending. */
  public double oldestPendingAgeSeconds() {
    return oldestPendingAgeSeconds;
  }

  /** The metrics in the Prometheus text exposition format 0.0.4. */
  public String prometheusText() {
    String t = "table=\"" + table + "\"";
    StringBuilder b = new StringBuilder();
    if (pending.get() >= 0) {
      gauge(b, PENDING, PENDING_HELP, t, pending.get());
      gauge(b, OLDEST_PENDING_AGE, OLDEST_PENDING_AGE_HELP, t, oldestPendingAgeSeconds);
      gauge(b, PARKED, PARKED_HELP, t, parked.get());
    }
    b.append("# HELP ").append(DELIVERIES).append(' ').append(DELIVERIES_HELP).append('\n');
    b.append("# TYPE ").append(DELIVERIES).append(" counter\n");
    for (int c = 0; c < CHANNELS.size(); c++) {
      for (Outcome o : Outcome.values()) {
        b.append(DELIVERIES).append('{').append(t).append(",channel=\"").append(CHANNELS.get(c))
            .append("\",outcome=\"").append(o.label()).append("\"} ")
            .append(deliveries.get(c * Outcome.values().length + o.ordinal())).append('\n');
      }
    }
    return b.toString();
  }

  private static void gauge(StringBuilder b, String name, String help, String labels, double value) {
    b.append("# HELP ").append(name).append(' ').append(help).append('\n');
    b.append("# TYPE ").append(name).append(" gauge\n");
    b.append(name).append('{').append(labels).append("} ").append(format(value)).append('\n');
  }

  private static String format(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
  }
}
