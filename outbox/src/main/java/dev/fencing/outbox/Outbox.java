package dev.fencing.outbox;

import dev.fencing.protocol.OutboxSchema;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Locale;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Defers a side effect to the outbox in one line, inside the caller's transaction: the event commits, and is
 * delivered, only if the transaction commits (and the table's fence accepted its token). Plain JDBC on the caller's
 * connection; the table's trigger fills the lock, token and grant from the session the agent set. Each call returns
 * the event id, the {@code Idempotency-Key} (HTTP) or {@code fencing-event-id} (Kafka) the receiver will see.
 *
 * <pre>{@code
 * try (Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   // ... the business rows ...
 *   Outbox.post(c, "outbox", URI.create("https://hooks.example.com/paid"), "{\"order\":42}");
 *   c.commit();
 * }
 * }</pre>
 */
public final class Outbox {
  private static final Pattern TABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*\\.)?[A-Za-z_][A-Za-z0-9_]*");

  private Outbox() {}

  /** An HTTP POST of {@code body} to {@code url}, with no extra header. */
  public static String post(Connection c, String table, URI url, String body) throws SQLException {
    return http(c, table, "POST", url, null, body);
  }

  /** An HTTP POST of {@code body} to {@code url} with a {@code Content-Type} (e.g. {@code application/json}). */
  public static String post(Connection c, String table, URI url, String contentType, String body)
      throws SQLException {
    return http(c, table, "POST", url, contentType == null ? null : "Content-Type: " + contentType, body);
  }

  /**
   * An HTTP request.
   *
   * @param method the HTTP method (POST when null)
   * @param headers extra headers, one {@code Name: value} per line, or null
   * @param body the body (UTF-8), or null for none
   */
  public static String http(Connection c, String table, String method, URI url, String headers, String body)
      throws SQLException {
    String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("http") || scheme.equals("https")) || url.getHost() == null) {
      throw new IllegalArgumentException("url: an absolute http(s) URL expected, got " + url);
    }
    if (headers != null) {
      Headers.parse(headers);
    }
    String m = method == null ? "POST" : method.trim().toUpperCase(Locale.ROOT);
    if (!m.matches("[A-Z]+")) {
      throw new IllegalArgumentException("method: an HTTP method such as POST or PUT expected, got " + method);
    }
    return insert(c, table, OutboxSchema.CHANNEL_HTTP, url.toString(), m, null, headers, body);
  }

  /** A Kafka record: {@code value} to {@code topic} with {@code key} (null: none), both UTF-8. */
  public static String kafka(Connection c, String table, String topic, String key, String value)
      throws SQLException {
    if (topic == null || !topic.matches("[A-Za-z0-9._-]{1,249}")) {
      throw new IllegalArgumentException("topic: a Kafka topic name (letters, digits, '.', '_', '-') expected, got "
          + topic);
    }
    return insert(c, table, OutboxSchema.CHANNEL_KAFKA, topic, null, key, null, value);
  }

  private static String insert(Connection c, String table, String channel, String target, String method,
      String key, String headers, String payload) throws SQLException {
    String id = UUID.randomUUID().toString();
    String sql = "INSERT INTO " + checkTable(table) + " (" + OutboxSchema.EVENT_ID + ", " + OutboxSchema.CHANNEL
        + ", " + OutboxSchema.TARGET + ", " + OutboxSchema.METHOD + ", " + OutboxSchema.MESSAGE_KEY + ", "
        + OutboxSchema.HEADERS + ", " + OutboxSchema.PAYLOAD + ") VALUES (?, ?, ?, ?, ?, ?, ?)";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, id);
      ps.setString(2, channel);
      ps.setString(3, target);
      ps.setString(4, method);
      ps.setString(5, key);
      ps.setString(6, headers);
      ps.setString(7, payload);
      ps.executeUpdate();
    }
    return id;
  }

  /** The table name if it is {@code [schema.]table} of letters, digits and _. */
  static String checkTable(String table) {
    if (table == null || !TABLE.matcher(table).matches()) {
      throw new IllegalArgumentException("table: [schema.]name of letters, digits and _ expected, got '" + table
          + "'");
    }
    return table;
  }
}
