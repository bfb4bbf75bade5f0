package dev.fencing.fence.sql;

import dev.fencing.fence.store.SqlDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
 */
public final class ProcessedEvents {

  /** Event ids are Idempotency-Key values: 1 to 64 visible ASCII characters. */
  private static final Pattern EVENT_ID = Pattern.compile("[!-~]{1,64}");
  private static final String H2_DUPLICATE_KEY = "23505";
  private static final Map<String, String> STATEMENTS = new ConcurrentHashMap<>();

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
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setString(1, eventId);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      // H2 has no insert that skips a duplicate quietly; its failed statement leaves the transaction as it was.
      if (dialect == SqlDialect.H2 && H2_DUPLICATE_KEY.equals(e.getSQLState())) {
        return false;
      }
      throw e;
    }
  }
}
