package dev.fencing.fence.sql;

import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.SessionVariables;
import dev.fencing.protocol.SqlStates;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.regex.Pattern;
import org.h2.api.Trigger;

/**
 * The H2 fence: a Java trigger, since H2 has no procedural SQL. It runs inside H2 (the class must be on the
 * database's classpath: this module's jar) and reads the session's {@code @fencing_lock} and {@code @fencing_token}.
 * Its configuration comes from its name (see {@link H2FenceDialect#triggerName}).
 *
 * <p>H2 has no shared row locks, so the shared lock of the other dialects is striped: a same-token writer locks one of
 * {@value SqlFenceDdl#H2_STRIPES} rows of {@code fencing_fence_stripe} (chosen by session id) FOR UPDATE until its
 * transaction ends, an advancing writer locks them all, which waits for every transaction that passed with the old
 * token. Same-token writers of different stripes never wait for each other.
 *
 * <p>Both modes use row-level triggers: H2 runs a statement-level trigger of an autocommit statement in autocommit
 * mode with commits disabled, so it could not advance the fence row.
 */
public final class H2FenceTrigger implements Trigger {

  private static final Pattern TOKEN = Pattern.compile("[1-9][0-9]{0,18}");
  private static final Pattern GRANT = Pattern.compile("[!-~]{1,64}");
  private static final String MAX = Long.toString(Long.MAX_VALUE);

  private String lock;
  private boolean perRow;
  private boolean permissive;
  private String schemaName;
  private String tableName;
  private String fence;
  private String stripes;
  private volatile int tokenColumn = -1;
  /**
   * Whether the fence table has the grant columns (a table of an earlier release gets them at the next install).
   * Without both, the trigger neither reads nor writes a grant.
   */
  private volatile boolean grantColumns;

  /**
   * The fence row: its token and the grant that token was issued to (null: none stored, or stored for another token:
   * a grant counts only while {@code grant_token} equals {@code token}).
   */
  private record Fence(long token, String grant) {
  }

  @Override
  public void init(Connection conn, String schemaName, String triggerName, String tableName, boolean before,
      int type) throws SQLException {
    String[] parts = triggerName.split(":", 4);
    if (parts.length != 4 || !parts[0].equals("fencing") || !before) {
      throw new SQLException("trigger " + triggerName + " is not a fencing trigger made by the installer: expected a "
          + "BEFORE trigger named fencing:<table|row>[-permissive]:<lock>:<table>");
    }
    this.perRow = parts[1].startsWith("row");
    this.permissive = parts[1].endsWith("-permissive");
    this.lock = parts[2];
    this.schemaName = schemaName;
    this.tableName = tableName;
    String prefix = SqlDialect.H2.quote(schemaName) + ".";
    this.fence = prefix + SqlFenceDdl.FENCE_TABLE;
    this.stripes = prefix + SqlFenceDdl.STRIPE_TABLE;
  }

  @Override
  public void fire(Connection conn, Object[] oldRow, Object[] newRow) throws SQLException {
    Object rawLock;
    Object rawToken;
    Object rawGrant;
    long session;
    try (PreparedStatement ps = conn.prepareStatement("SELECT " + SessionVariables.USER_LOCK + ", "
        + SessionVariables.USER_TOKEN + ", SESSION_ID(), " + SessionVariables.USER_GRANT); ResultSet rs = ps.executeQuery()) {
      rs.next();
      rawLock = rs.getObject(1);
      rawToken = rs.getObject(2);
      session = rs.getLong(3);
      rawGrant = rs.getObject(4);
    }
    if (perRow) {
      fireRow(conn, oldRow, newRow, rawLock, rawToken);
    } else {
      fireTable(conn, rawLock, rawToken, rawGrant, session);
    }
  }

  private void fireTable(Connection conn, Object rawLock, Object rawToken, Object rawGrant, long session)
      throws SQLException {
    Long token = validate(conn, rawLock, rawToken, null);
    if (token == null) {
      return;
    }
    String grant = rawGrant == null || rawGrant.toString().isEmpty() ? null : rawGrant.toString();
    if (grant != null && !GRANT.matcher(grant).matches()) {
      throw new SQLException("fencing: malformed grant '" + (grant.length() > 70 ? grant.substring(0, 70) : grant)
          + "' for lock '" + lock + "' on " + schemaName + "." + tableName + ": expected 1 to 64 visible ASCII "
          + "characters", SqlStates.MISSING_TOKEN);
    }
    boolean grants = hasGrantColumns(conn);
    Fence hint = readFence(conn, false, grants);
    boolean exclusive = hint == null || token > hint.token();
    boolean readCommitted = conn.getTransactionIsolation() <= Connection.TRANSACTION_READ_COMMITTED;
    while (true) {
      if (exclusive) {
        lockStripes(conn, -1);
      } else {
        lockStripes(conn, (int) Math.floorMod(session, (long) SqlFenceDdl.H2_STRIPES));
      }
      Fence current = readFence(conn, exclusive || !readCommitted, grants);
      if (current != null && token == current.token()) {
        if (current.grant() == null || current.grant().equals(grant)) {
          return;
        }
        // The same token from another grant: a holder after a coordinator restore got the old token again.
        throw new SQLException("fencing: token " + token + " for lock '" + lock + "' on " + schemaName + "."
            + tableName + " was issued to another grant (fence grant " + current.grant() + ", session grant "
            + (grant == null ? "none" : grant) + ")", SqlStates.STALE_TOKEN);
      }
      if (current != null && token < current.token()) {
        throw stale(token, current.token());
      }
      if (exclusive) {
        break;
      }
      exclusive = true;
    }
    // The advance stores the session's grant and, for it, grant_token (both NULL without a grant).
    try (PreparedStatement ps = conn.prepareStatement("UPDATE " + fence
        + " SET token = ?, updated_at = CURRENT_TIMESTAMP" + (grants ? ", " + SqlFenceDdl.GRANT_COLUMN + " = ?, "
        + SqlFenceDdl.GRANT_TOKEN_COLUMN + " = ?" : "") + " WHERE lock_name = ?")) {
      int i = 1;
      ps.setLong(i++, token);
      if (grants) {
        setGrant(ps, i, grant, token);
        i += 2;
      }
      ps.setString(i, lock);
      if (ps.executeUpdate() == 1) {
        return;
      }
    }
    try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + fence
        + " (lock_name, token, updated_at" + (grants ? ", " + SqlFenceDdl.GRANT_COLUMN + ", "
        + SqlFenceDdl.GRANT_TOKEN_COLUMN : "") + ") VALUES (?, ?, CURRENT_TIMESTAMP" + (grants ? ", ?, ?" : "") + ")")) {
      ps.setString(1, lock);
      ps.setLong(2, token);
      if (grants) {
        setGrant(ps, 3, grant, token);
      }
      ps.executeUpdate();
    }
  }

  private static void setGrant(PreparedStatement ps, int index, String grant, long token) throws SQLException {
    ps.setString(index, grant);
    if (grant == null) {
      ps.setNull(index + 1, java.sql.Types.BIGINT);
    } else {
      ps.setLong(index + 1, token);
    }
  }

  /**
   * Looked up until found (then remembered): a fence table of an earlier release gets the column at the next
   * install, while this trigger may already run.
   */
  private boolean hasGrantColumns(Connection conn) throws SQLException {
    if (grantColumns) {
      return true;
    }
    try (PreparedStatement ps = conn.prepareStatement("SELECT COUNT(*) FROM INFORMATION_SCHEMA.COLUMNS"
        + " WHERE TABLE_SCHEMA = ? AND UPPER(TABLE_NAME) = UPPER(?) AND UPPER(COLUMN_NAME) IN (UPPER(?), UPPER(?))")) {
      ps.setString(1, schemaName);
      ps.setString(2, SqlFenceDdl.FENCE_TABLE);
      ps.setString(3, SqlFenceDdl.GRANT_COLUMN);
      ps.setString(4, SqlFenceDdl.GRANT_TOKEN_COLUMN);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        grantColumns = rs.getInt(1) == 2;
      }
    }
    return grantColumns;
  }

  /** Per-row mode: the row's token is the fence ({@code WHERE token <= :token}), and the row gets the session token. */
  private void fireRow(Connection conn, Object[] oldRow, Object[] newRow, Object rawLock, Object rawToken)
      throws SQLException {
    int column = tokenColumn(conn);
    Long rowToken = oldRow == null || oldRow[column] == null ? null : ((Number) oldRow[column]).longValue();
    Long token = validate(conn, rawLock, rawToken, rowToken == null ? "none" : rowToken.toString());
    if (token == null) {
      if (oldRow != null && newRow != null) {
        newRow[column] = oldRow[column];
      }
      return;
    }
    if (rowToken != null && rowToken > token) {
      throw stale(token, rowToken);
    }
    if (newRow != null) {
      newRow[column] = token;
    }
  }

  /**
   * The session token, null for a missing token in permissive mode, or FN002. {@code current} is the fence token the
   * message shows, read from the fence row when null.
   */
  private Long validate(Connection conn, Object rawLock, Object rawToken, String current) throws SQLException {
    String raw = rawToken == null ? null : rawToken.toString();
    String problem;
    if (raw == null || raw.isEmpty()) {
      if (permissive) {
        return null;
      }
      problem = "missing token";
    } else if (!TOKEN.matcher(raw).matches() || (raw.length() == MAX.length() && raw.compareTo(MAX) > 0)) {
      problem = "malformed token '" + (raw.length() > 40 ? raw.substring(0, 40) : raw) + "'";
    } else if (rawLock == null || !lock.equals(rawLock.toString())) {
      problem = "session lock '" + rawLock + "' for token " + raw;
    } else {
      return Long.parseLong(raw);
    }
    if (current == null) {
      Fence f = readFence(conn, false, false);
      current = f == null ? "none" : Long.toString(f.token());
    }
    throw new SQLException("fencing: " + problem + " for lock '" + lock + "' on " + schemaName + "." + tableName
        + " (current fence token " + current + "): set @fencing_lock and @fencing_token", SqlStates.MISSING_TOKEN);
  }

  private SQLException stale(long token, long current) {
    return new SQLException("fencing: stale token " + token + " for lock '" + lock + "' on " + schemaName + "."
        + tableName + ": current fence token is " + current, SqlStates.STALE_TOKEN);
  }

  private Fence readFence(Connection conn, boolean forUpdate, boolean withGrant) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement("SELECT token" + (withGrant ? ", " + SqlFenceDdl.GRANT_COLUMN
        + ", " + SqlFenceDdl.GRANT_TOKEN_COLUMN : "") + " FROM " + fence + " WHERE lock_name = ?"
        + (forUpdate ? " FOR UPDATE" : ""))) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        long token = rs.getLong(1);
        if (!withGrant) {
          return new Fence(token, null);
        }
        String grant = rs.getString(2);
        long grantToken = rs.getLong(3);
        return new Fence(token, !rs.wasNull() && grantToken == token ? grant : null);
      }
    }
  }

  /** Locks one stripe, or all of them when {@code stripe} is -1; a missing stripe row means a broken install. */
  private void lockStripes(Connection conn, int stripe) throws SQLException {
    int expected = stripe < 0 ? SqlFenceDdl.H2_STRIPES : 1;
    int locked = 0;
    try (PreparedStatement ps = conn.prepareStatement("SELECT stripe FROM " + stripes + " WHERE lock_name = ?"
        + (stripe < 0 ? "" : " AND stripe = ?") + " ORDER BY stripe FOR UPDATE")) {
      ps.setString(1, lock);
      if (stripe >= 0) {
        ps.setInt(2, stripe);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          locked++;
        }
      }
    }
    if (locked != expected) {
      throw new SQLException("fencing: the fence of lock '" + lock + "' is incomplete (" + SqlFenceDdl.STRIPE_TABLE
          + " lacks its rows): run `sql install` for " + schemaName + "." + tableName + " again", "55000");
    }
  }

  /** Position of the token column in the row arrays, looked up once (init may run before the column exists). */
  private int tokenColumn(Connection conn) throws SQLException {
    int column = tokenColumn;
    if (column >= 0) {
      return column;
    }
    DatabaseMetaData md = conn.getMetaData();
    try (ResultSet rs = md.getColumns(null, schemaName, tableName, null)) {
      while (rs.next()) {
        if (rs.getString("TABLE_NAME").equals(tableName) && rs.getString("TABLE_SCHEM").equals(schemaName)
            && rs.getString("COLUMN_NAME").equalsIgnoreCase(SqlFenceDdl.TOKEN_COLUMN)) {
          column = rs.getInt("ORDINAL_POSITION") - 1;
        }
      }
    }
    if (column < 0) {
      throw new SQLException("fencing: table " + schemaName + "." + tableName + " has no " + SqlFenceDdl.TOKEN_COLUMN
          + " column for its per-row fence: run `sql install --per-row` again", "55000");
    }
    tokenColumn = column;
    return column;
  }
}
