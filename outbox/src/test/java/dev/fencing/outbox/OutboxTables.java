package dev.fencing.outbox;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
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

  /** Creates {@code table} on the connection's database, for {@code lock}. */
  static void create(Connection c, String table, String lock) throws SQLException, IOException {
    OutboxDialect dialect = OutboxDialect.of(c);
    String resource = "local-outbox-" + dialect.name().toLowerCase(java.util.Locale.ROOT) + ".sql";
    String script;
    try (InputStream in = OutboxTables.class.getResourceAsStream(resource)) {
      script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    try (Statement s = c.createStatement()) {
      for (String statement : script.split("-- @@")) {
        String sql = statement.strip();
        if (sql.endsWith(";")) {
          sql = sql.substring(0, sql.length() - 1);
        }
        if (!sql.lines().allMatch(l -> l.isBlank() || l.startsWith("--"))) {
          s.execute(sql.replace("{t}", table));
        }
      }
    }
  }

  /** Sets the session's lock, token and grant as the agent does (PostgreSQL settings, MariaDB user variables). */
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
      try (PreparedStatement ps = c.prepareStatement("SET @fencing_lock = ?, @fencing_token = ?, @fencing_grant = ?")) {
        ps.setString(1, lock);
        ps.setString(2, Long.toString(token));
        ps.setString(3, grant == null ? "" : grant);
        ps.execute();
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
