package dev.fencing.fence.sql;

import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.OutboxSchema;
import dev.fencing.protocol.SessionVariables;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;
import org.h2.api.Trigger;

/**
 * The tokened outbox on H2 (for tests), what the PostgreSQL and MariaDB triggers of {@code outbox.sql} do, in Java:
 * on INSERT the table-mode, strict fence of the lock ({@link H2FenceTrigger}), then the event's lock, token, grant, id,
 * order and delivery columns; on UPDATE only the delivery columns may change. Named
 * {@code fencing:outbox:<lock>:<table>} by the installer ({@link OutboxDdl}).
 */
public final class H2OutboxTrigger implements Trigger {

  private static final String STATE = "23514";
  private static final String DUPLICATE_KEY = "23505";
  private static final Pattern URL = Pattern.compile("(?i)https?://[!-~]+");
  private static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9._-]{1,249}");
  private static final Pattern METHOD = Pattern.compile("[A-Z]{1,16}");
  private static final Pattern EVENT_ID = Pattern.compile("[!-~]{1,64}");
  private static final String NAME = "[!#$%&'*+.^_`|~0-9A-Za-z-]+:[^\\p{Cntrl}]*";
  private static final Pattern HEADERS = Pattern.compile(NAME + "(\\r?\\n" + NAME + ")*(\\r?\\n)?");
  private static final Pattern RESERVED = Pattern.compile("(^|\\n)(fencing(-[^:]*)?|idempotency-key):");
  /** The event columns: an UPDATE may change none of them. */
  private static final List<String> EVENT_COLUMNS = List.of(OutboxSchema.EVENT_ID, OutboxSchema.LOCK,
      OutboxSchema.TOKEN, OutboxSchema.GRANT, OutboxSchema.CHANNEL, OutboxSchema.TARGET, OutboxSchema.METHOD,
      OutboxSchema.MESSAGE_KEY, OutboxSchema.HEADERS, OutboxSchema.PAYLOAD, OutboxSchema.ORDER_KEY,
      OutboxSchema.KEY_SEQ, OutboxSchema.CREATED_AT, OutboxSchema.FENCING);

  private final H2FenceTrigger fence = new H2FenceTrigger();
  private final Map<String, Integer> index = new HashMap<>();
  private String lock;
  private String where;
  private String keyTable;

  @Override
  public void init(Connection conn, String schemaName, String triggerName, String tableName, boolean before,
      int type) throws SQLException {
    String[] parts = triggerName.split(":", 4);
    if (parts.length != 4 || !parts[0].equals("fencing") || !parts[1].equals(OutboxDdl.H2_OUTBOX_KIND) || !before) {
      throw new SQLException("trigger " + triggerName + " is not an outbox trigger made by the installer: expected a "
          + "BEFORE trigger named fencing:outbox:<lock>:<table>");
    }
    this.lock = parts[2];
    this.where = schemaName + "." + tableName;
    fence.init(conn, schemaName, "fencing:table:" + lock + ":" + tableName, tableName, true, type);
    SqlOutbox outbox = new SqlOutbox(new TableName(schemaName, tableName), lock);
    this.keyTable = outbox.keyTable().sql(SqlDialect.H2);
    try (PreparedStatement ps = conn.prepareStatement("SELECT COLUMN_NAME, ORDINAL_POSITION FROM "
        + "INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?")) {
      ps.setString(1, schemaName);
      ps.setString(2, tableName);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          index.put(rs.getString(1).toLowerCase(Locale.ROOT), rs.getInt(2) - 1);
        }
      }
    }
    // An outbox of an earlier release lacks the fencing column until its re-install; its events are written without.
    List<String> missing = new ArrayList<>(OutboxInstaller.EARLIER_OUTBOX_COLUMNS);
    missing.removeAll(index.keySet());
    if (!missing.isEmpty()) {
      throw new SQLException("fencing outbox " + where + " lacks the columns " + missing + ": run `sql install "
          + "--outbox` again", "55000");
    }
  }

  @Override
  public void fire(Connection conn, Object[] oldRow, Object[] newRow) throws SQLException {
    if (oldRow == null && newRow != null) {
      fence.fire(conn, null, newRow);
      fill(conn, newRow);
    } else if (oldRow != null && newRow != null) {
      List<String> changed = new ArrayList<>();
      for (String column : EVENT_COLUMNS) {
        Integer at = index.get(column);
        if (at != null && !Objects.equals(oldRow[at], newRow[at])) {
          changed.add(column);
        }
      }
      if (!changed.isEmpty()) {
        throw new SQLException("fencing outbox " + where + ": event " + oldRow[index.get(OutboxSchema.EVENT_ID)]
            + " cannot change its " + String.join(", ", changed) + "; only "
            + String.join(", ", OutboxInstaller.DELIVERY_COLUMNS) + " may be updated", STATE);
      }
    }
  }

  private void fill(Connection conn, Object[] row) throws SQLException {
    Object rawLock;
    Object rawToken;
    Object rawGrant;
    Object now;
    try (PreparedStatement ps = conn.prepareStatement("SELECT " + SessionVariables.USER_LOCK + ", "
        + SessionVariables.USER_TOKEN + ", " + SessionVariables.USER_GRANT + ", CURRENT_TIMESTAMP");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      rawLock = rs.getObject(1);
      rawToken = rs.getObject(2);
      rawGrant = rs.getObject(3);
      now = rs.getObject(4);
    }
    // The fence accepted these; the session's values, whatever the application wrote.
    if (rawToken == null || !lock.equals(String.valueOf(rawLock))) {
      throw new SQLException("fencing: outbox " + where + " needs the session's token for lock '" + lock + "'",
          dev.fencing.protocol.SqlStates.MISSING_TOKEN);
    }
    set(row, OutboxSchema.LOCK, lock);
    long token = Long.parseLong(rawToken.toString());
    set(row, OutboxSchema.TOKEN, token);
    String grant = rawGrant == null || rawGrant.toString().isEmpty() ? null : rawGrant.toString();
    set(row, OutboxSchema.GRANT, grant);
    if (index.containsKey(OutboxSchema.FENCING)) {
      // The Kafka header's value, as the PostgreSQL and MariaDB triggers build it (no check: the fence reads it).
      set(row, OutboxSchema.FENCING, token + ";" + lock + (grant == null ? "" : ";" + grant));
    }
    String id = text(row, OutboxSchema.EVENT_ID);
    if (id == null || id.isEmpty()) {
      set(row, OutboxSchema.EVENT_ID, UUID.randomUUID().toString());
    } else if (!EVENT_ID.matcher(id).matches()) {
      throw refused("event_id '" + cut(id, 70) + "' is not 1 to 64 visible ASCII characters (leave it NULL for a "
          + "generated UUID)");
    }
    String channel = text(row, OutboxSchema.CHANNEL);
    String target = text(row, OutboxSchema.TARGET);
    String method = text(row, OutboxSchema.METHOD);
    if (OutboxSchema.CHANNEL_HTTP.equals(channel)) {
      if (target == null || !URL.matcher(target).matches()) {
        throw refused("target '" + cut(target, 200) + "' of an http event is not an absolute http(s) URL");
      }
      method = (method == null ? "POST" : method).toUpperCase(Locale.ROOT);
      if (!METHOD.matcher(method).matches()) {
        throw refused("method '" + cut(method, 40) + "' is not an HTTP method (letters, e.g. POST)");
      }
      set(row, OutboxSchema.METHOD, method);
    } else if (OutboxSchema.CHANNEL_KAFKA.equals(channel)) {
      if (target == null || !TOPIC.matcher(target).matches()) {
        throw refused("target '" + cut(target, 200) + "' of a kafka event is not a topic name (1 to 249 of A-Z a-z "
            + "0-9 . _ -)");
      }
      if (method != null) {
        throw refused("a kafka event has no method (got '" + cut(method, 40) + "'): leave it NULL");
      }
    } else {
      throw refused("channel '" + cut(channel, 40) + "' is not 'http' or 'kafka'");
    }
    String headers = text(row, OutboxSchema.HEADERS);
    if (headers != null && !HEADERS.matcher(headers).matches()) {
      throw refused("headers '" + cut(headers, 200) + "' are not lines of \"Name: value\"");
    }
    if (headers != null && RESERVED.matcher(headers.toLowerCase(Locale.ROOT)).find()) {
      throw refused("headers name a Fencing, Fencing-* or Idempotency-Key header; the relay sets those from the "
          + "event");
    }
    String orderKey = orderKey(channel, target, text(row, OutboxSchema.MESSAGE_KEY));
    set(row, OutboxSchema.ORDER_KEY, orderKey);
    set(row, OutboxSchema.KEY_SEQ, nextSeq(conn, orderKey));
    set(row, OutboxSchema.STATE, OutboxSchema.PENDING);
    set(row, OutboxSchema.ATTEMPTS, 0);
    set(row, OutboxSchema.CREATED_AT, now);
    set(row, OutboxSchema.NEXT_ATTEMPT_AT, now);
    set(row, OutboxSchema.DELIVERED_AT, null);
    set(row, OutboxSchema.LAST_ERROR, null);
    set(row, OutboxSchema.CLAIMED_BY, null);
    set(row, OutboxSchema.CLAIMED_UNTIL, null);
  }

  /**
   * The key's next number: the update locks the key's counter row until this transaction ends, so a second writer of
   * the key waits, then counts on from the committed value.
   */
  private long nextSeq(Connection conn, String orderKey) throws SQLException {
    for (int attempt = 0; attempt < 3; attempt++) {
      try (PreparedStatement ps = conn.prepareStatement("UPDATE " + keyTable
          + " SET last_seq = last_seq + 1 WHERE order_key = ?")) {
        ps.setString(1, orderKey);
        if (ps.executeUpdate() == 1) {
          try (PreparedStatement read = conn.prepareStatement("SELECT last_seq FROM " + keyTable
              + " WHERE order_key = ?")) {
            read.setString(1, orderKey);
            try (ResultSet rs = read.executeQuery()) {
              rs.next();
              return rs.getLong(1);
            }
          }
        }
      }
      try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + keyTable
          + " (order_key, last_seq) VALUES (?, 1)")) {
        ps.setString(1, orderKey);
        ps.executeUpdate();
        return 1;
      } catch (SQLException e) {
        if (!DUPLICATE_KEY.equals(e.getSQLState())) {
          throw e;
        }
      }
    }
    throw new SQLException("fencing outbox " + where + ": could not number an event of its key (the counter row in "
        + keyTable + " appears and disappears)", "40001");
  }

  /** The SHA-256 (lower-case hex) of channel, target and message key, as the PostgreSQL and MariaDB triggers make it. */
  static String orderKey(String channel, String target, String messageKey) {
    String text = channel + "\n" + target + "\n" + (messageKey == null ? "-" : "+" + messageKey);
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      StringBuilder b = new StringBuilder(64);
      for (byte d : digest) {
        b.append(Character.forDigit((d >> 4) & 0xf, 16)).append(Character.forDigit(d & 0xf, 16));
      }
      return b.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
  }

  private SQLException refused(String what) {
    return new SQLException("fencing outbox " + where + ": " + what, STATE);
  }

  private void set(Object[] row, String column, Object value) {
    row[index.get(column)] = value;
  }

  private String text(Object[] row, String column) {
    Object v = row[index.get(column)];
    return v == null ? null : v.toString();
  }

  private static String cut(String s, int max) {
    return s == null ? "NULL" : s.length() > max ? s.substring(0, max) : s;
  }
}
