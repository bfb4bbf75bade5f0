package dev.fencing.fence.sql;

import dev.fencing.fence.store.SqlDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * A receiver's dedupe by event id, atomic with its effect: {@link #markFirst} inserts the id into the receiver's
 * processed-events table ({@code sql install --processed-events <table>}) in the caller's transaction, so the effect
 * and the mark commit or roll back together. An outbox delivers at least once; with this, each event is applied once.
 *
 * <pre>
 * connection.setAutoCommit(false);
 * if (ProcessedEvents.markFirst(connection, "processed_events", eventId)) {
 *   applyTheEffect(connection);
 * }
 * connection.commit();
 * </pre>
 *
 * <p>Each false (a delivery the receiver skipped as a duplicate) is counted per table in this JVM:
 * {@link #duplicatesSkipped} for a metrics library, {@link #prometheusText()} for a Prometheus endpoint.
 */
public final class ProcessedEvents {

  /** The Prometheus name of the duplicates counter, labelled {@code table}. */
  public static final String DUPLICATES = "fencing_outbox_duplicates_skipped_total";

  /** Event ids are Idempotency-Key values: 1 to 64 visible ASCII characters. */
  private static final Pattern EVENT_ID = Pattern.compile("[!-~]{1,64}");
  private static final String H2_DUPLICATE_KEY = "23505";
  private static final Map<String, String> STATEMENTS = new ConcurrentHashMap<>();
  /** Per table name as the receiver gives it (its own constants: bounded), once a statement was made for it. */
  private static final Map<String, LongAdder> DUPLICATES_SKIPPED = new ConcurrentHashMap<>();

  private ProcessedEvents() {
  }

  /**
   * Records {@code eventId} in {@code table} ({@code [schema.]table}, named as the application names it) within the
   * connection's current transaction: true the first time, false when it is already recorded. A concurrent
   * transaction recording the same id waits until this one ends, then gets false if it committed (true if it rolled
   * back), so exactly one of them applies the effect. On PostgreSQL a false leaves the transaction usable.
   *
   * @throws IllegalArgumentException for a table name that is not a plain identifier or an id that is not 1 to 64
   *     visible ASCII characters
   */
  public static boolean markFirst(Connection connection, String table, String eventId) throws SQLException {
    if (eventId == null || !EVENT_ID.matcher(eventId).matches()) {
      throw new IllegalArgumentException("invalid event id '" + (eventId == null ? null
          : eventId.length() > 70 ? eventId.substring(0, 70) + "..." : eventId)
          + "': expected 1 to 64 visible ASCII characters (the outbox's event_id)");
    }
    SqlDialect dialect = SqlDialect.detect(connection);
    String sql = STATEMENTS.computeIfAbsent(dialect.cliName() + " " + table,
        k -> new OutboxDdl(dialect).markProcessed(TableName.parse(table)));
    boolean first;
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setString(1, eventId);
      first = ps.executeUpdate() == 1;
    } catch (SQLException e) {
      // H2 has no insert that skips a duplicate quietly; its failed statement leaves the transaction as it was.
      if (dialect != SqlDialect.H2 || !H2_DUPLICATE_KEY.equals(e.getSQLState())) {
        throw e;
      }
      first = false;
    }
    if (!first) {
      DUPLICATES_SKIPPED.computeIfAbsent(table, t -> new LongAdder()).increment();
    }
    return first;
  }

  /**
   * How many times {@link #markFirst} found an id already recorded in {@code table} (named as in those calls) in this
   * JVM: the deliveries the receiver skipped as duplicates (a transaction that then rolls back is counted too). With
   * Micrometer: {@code FunctionCounter.builder("fencing.outbox.duplicates.skipped", table,
   * ProcessedEvents::duplicatesSkipped).tag("table", table).register(registry)}.
   */
  public static long duplicatesSkipped(String table) {
    LongAdder n = DUPLICATES_SKIPPED.get(table);
    return n == null ? 0 : n.sum();
  }

  /**
   * {@value #DUPLICATES}{@code {table}} in the Prometheus text format 0.0.4, one sample per table that has skipped a
   * duplicate in this JVM (with its HELP and TYPE lines; empty before the first).
   */
  public static String prometheusText() {
    Map<String, LongAdder> tables = new TreeMap<>(DUPLICATES_SKIPPED);
    if (tables.isEmpty()) {
      return "";
    }
    StringBuilder b = new StringBuilder(256);
    b.append("# HELP ").append(DUPLICATES).append(" Deliveries skipped as duplicates (event id already processed).\n");
    b.append("# TYPE ").append(DUPLICATES).append(" counter\n");
    for (Map.Entry<String, LongAdder> e : tables.entrySet()) {
      String table = e.getKey().replace("\\", "\\\\").replace("\"", "\\\"");
      b.append(DUPLICATES).append("{table=\"").append(table).append("\"} ").append(e.getValue().sum()).append('\n');
    }
    return b.toString();
  }
}
