package dev.fencing.outbox;

import dev.fencing.fence.sql.OutboxInstaller;
import dev.fencing.fence.sql.SqlOutbox;
import dev.fencing.fence.sql.TableName;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** Creates an outbox table for a test and reads its rows back. */
final class OutboxTables {
  private OutboxTables() {}

  /** Creates the outbox {@code table} for {@code lock} with the SQL installer ({@code sql install --outbox}). */
  static void create(Connection c, String table, String lock) throws SQLException {
    new OutboxInstaller(c).install(new SqlOutbox(TableName.parse(table), lock));
  }

  /** Sets the session's lock, token and grant as the agent does (PostgreSQL settings, MariaDB and H2 variables). */
  static void session(Connection c, String lock, long token, String grant) throws SQLException {
    if (OutboxDialect.of(c) == OutboxDialect.POSTGRESQL) {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT set_config('fencing.lock', ?, false), set_config('fencing.token', ?, false),"
              + " set_config('fencing.grant', ?, false)")) {
        ps.setString(1, lock);
        ps.setString(2, Long.toString(token));
        ps.setString(3, grant == null ? "" : grant);
        ps.execute();
      }
    } else {
      String[][] values = {{"@fencing_lock", lock}, {"@fencing_token", Long.toString(token)},
          {"@fencing_grant", grant == null ? "" : grant}};
      for (String[] v : values) {
        try (PreparedStatement ps = c.prepareStatement("SET " + v[0] + " = ?")) {
          ps.setString(1, v[1]);
          ps.execute();
        }
      }
    }
  }

  record Row(String eventId, String state, int attempts, String lastError, long keySeq, String claimedBy) {}

  static List<Row> rows(Connection c, String table) throws SQLException {
    List<Row> rows = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT event_id, state, attempts, last_error, key_seq, claimed_by FROM "
            + table + " ORDER BY created_at, key_seq")) {
      while (rs.next()) {
        rows.add(new Row(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getString(4), rs.getLong(5),
            rs.getString(6)));
      }
    }
    return rows;
  }

  static Row row(Connection c, String table, String eventId) throws SQLException {
    return rows(c, table).stream().filter(r -> r.eventId().equals(eventId)).findFirst()
        .orElseThrow(() -> new AssertionError("no event " + eventId + " in " + table));
  }
}
