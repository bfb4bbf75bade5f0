package dev.fencing.fence.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A fence store in the SQL fence's table {@code fencing_fence(lock_name varchar(128) primary key, token bigint not
 * null, updated_at timestamp)} (fences/sql), so that every service instance and the database fence see one token per
 * lock: a token advanced through HTTP makes a lower-token SQL write fail with FN001, and the reverse. Tested on
 * PostgreSQL, MariaDB and H2; the table comes from {@code sql install} (or the same DDL in a migration).
 *
 * <p>A check reads the fence row with a plain autocommit SELECT. The token in force (the common case) is accepted on
 * that read alone: nothing is locked or written, so the holder's requests never wait for each other. A lower token is
 * rejected on it too, since the fence only ever rises. Only a higher token opens a transaction, in READ COMMITTED:
 * <ol>
 *   <li>it first takes the lock the SQL fence's triggers take to advance, so that the advance waits for SQL
 *       transactions still running with the old token and cannot deadlock with them: PostgreSQL's exclusive
 *       transaction-scoped advisory lock on ({@code 0x46454E43}, {@code hashtext(lock)}); in MariaDB/MySQL and H2 all
 *       of the lock's rows of {@code fencing_fence_stripe}, when that table exists;</li>
 *   <li>reads the fence row {@code FOR UPDATE}, a locking read that returns the latest committed token in all three
 *       databases and holds the row until commit, so concurrent advances (from any instance) run one after the
 *       other and each decides on the token the previous one committed;</li>
 *   <li>then advances with {@code UPDATE ... WHERE lock_name = ? AND token < ?} (or inserts the row if the lock has
 *       none; a duplicate-key race with another inserter is retried), and in MariaDB/MySQL also writes the token into
 *       the stripe rows, which that SQL fence compares against: without it an old-token SQL write would still pass.</li>
 * </ol>
 * An equal or lower token found at step 2 is accepted or rejected without writing. The fence never goes down.
 * Steps 1 and 3 are {@link FenceTable}'s, the protocol shared with the SQL fence's triggers and {@code fence reset}.
 *
 * <p>Advances wait for lock holders in the database: give the DataSource's connections a lock or statement timeout.
 *
 * <p><b>Grants.</b> The row also keeps the grant id of the request that advanced it ({@link #GRANT_COLUMN}) and the
 * token it advanced to ({@link #GRANT_TOKEN_COLUMN}), both nullable: an equal token is accepted only when no grant is
 * stored for it or the request carries the same grant (an etcd restored from a snapshot can issue the old holder's
 * token to a new holder). A stored grant counts only while {@code grant_token} equals {@code token}, the rule the SQL
 * fence's triggers apply to the same row ({@link FenceTable}): a grant a SQL write stored counts here, and the
 * reverse. A writer that moves the token without knowing about grants ({@code fence reset}, an older fence's
 * triggers) thus leaves no stale grant behind: the new token has none. MariaDB/MySQL's stripe rows get the grant
 * with the token. The store adds both columns to an existing table on first use ({@code ALTER TABLE ... ADD
 * COLUMN}, idempotent: only the missing ones, with a short lock timeout); when it may not (no ALTER privilege, lock
 * timeout), it logs a warning, works without grants (equal tokens accepted) and tries again a minute later.
 */
public final class JdbcFenceStore implements FenceStore {

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
  private static final int ATTEMPTS = 3;
  private static final System.Logger LOG = System.getLogger(JdbcFenceStore.class.getName());

  /** Nullable column holding the grant id of the request that advanced the fence ({@code varchar(64)}). */
  public static final String GRANT_COLUMN = FenceSchema.GRANT_COLUMN;
  /** Nullable column holding the token that grant advanced to ({@code bigint}); the grant counts only for it. */
  public static final String GRANT_TOKEN_COLUMN = FenceSchema.GRANT_TOKEN_COLUMN;
  private static final long GRANT_COLUMNS_RETRY_NANOS = 60_000_000_000L;

  private final DataSource dataSource;
  private final String schema;
  private final String fence;
  /** The database's dialect, once known; empty for a database the SQL fence does not support (no lock step). */
  private volatile Optional<SqlDialect> dialect;
  /** The grant columns exist (checked, or added, once). */
  private volatile boolean grantColumns;
  /** When they could not be added: System.nanoTime() after which to try again (0: not tried yet). */
  private volatile long grantColumnsRetryAt;

  /** The fence table in the connections' default schema (database, for MariaDB/MySQL). */
  public JdbcFenceStore(DataSource dataSource) {
    this(dataSource, null);
  }

  /**
   * The fence table in {@code schema} (MariaDB/MySQL: database), the schema of the fenced tables, where {@code sql
   * install} puts it. The name is used unquoted, so the database folds it as usual.
   */
  public JdbcFenceStore(DataSource dataSource, String schema) {
    if (dataSource == null) {
      throw new IllegalArgumentException("missing DataSource");
    }
    if (schema != null && !IDENTIFIER.matcher(schema).matches()) {
      throw new IllegalArgumentException("invalid schema '" + schema + "': expected an identifier "
          + "[A-Za-z_][A-Za-z0-9_]* of at most 63 characters");
    }
    this.dataSource = dataSource;
    this.schema = schema;
    this.fence = FenceTable.fence(schema);
  }

  /** As {@link #check(String, long, String, boolean)} without a grant. */
  @Override
  public Verdict check(String lock, long token, boolean strict) {
    return check(lock, token, null, strict);
  }

  @Override
  public Verdict check(String lock, long token, String grant, boolean strict) {
    try (Connection c = dataSource.getConnection()) {
      boolean grants = grantColumns(c);
      FenceState seen = read(c, lock, grants, false);
      if (!c.getAutoCommit()) {
        c.rollback();
      }
      if (seen != null) {
        if (token < seen.token() || (strict && token == seen.token())) {
          return Verdict.stale(token, seen.token());
        }
        if (token == seen.token()) {
          return seen.replayedBy(token, grant) ? Verdict.replayed(token) : Verdict.accepted(token);
        }
      }
      return advance(c, lock, token, grants ? grant : null, grants, strict);
    } catch (SQLException e) {
      grantColumns = false; // checked again next time: the table may have been dropped and created anew
      throw new FenceStoreException("fencing: the JDBC fence store failed to check token " + token + " for lock '"
          + lock + "' in " + fence + ": " + e.getMessage(), e);
    }
  }

  @Override
  public long current(String lock) {
    return state(lock).token();
  }

  @Override
  public FenceState state(String lock) {
    try (Connection c = dataSource.getConnection()) {
      FenceState seen = read(c, lock, grantColumns(c), false);
      if (!c.getAutoCommit()) {
        c.rollback();
      }
      return seen == null ? FenceState.NONE : seen;
    } catch (SQLException e) {
      grantColumns = false;
      throw new FenceStoreException("fencing: the JDBC fence store failed to read lock '" + lock + "' in " + fence
          + ": " + e.getMessage(), e);
    }
  }

  /**
   * The lock's row: its token, and with {@code grants} the grant stored for that token (null when none, or when it
   * was stored for another token); null when the lock has no row.
   */
  private FenceState read(Connection c, String lock, boolean grants, boolean forUpdate) throws SQLException {
    if (!grants) {
      long seen = FenceTable.read(c, fence, lock, forUpdate);
      return seen < 0 ? null : new FenceState(seen, null);
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT token, " + GRANT_COLUMN + ", " + GRANT_TOKEN_COLUMN
        + " FROM " + fence + " WHERE lock_name = ?" + (forUpdate ? " FOR UPDATE" : ""))) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        long token = rs.getLong(1);
        String grant = rs.getString(2);
        long grantToken = rs.getLong(3);
        boolean forThisToken = !rs.wasNull() && grantToken == token;
        return new FenceState(token, forThisToken ? grant : null);
      }
    }
  }

  /**
   * Whether the fence table has the grant columns; adds the missing ones the first time (and a minute after a failed
   * attempt). False when they are missing and cannot be added (the store then keeps no grants), or when the table
   * itself is missing (the read that follows fails with the database's own error).
   */
  private boolean grantColumns(Connection c) throws SQLException {
    if (grantColumns) {
      return true;
    }
    long retryAt = grantColumnsRetryAt;
    if (retryAt != 0 && System.nanoTime() - retryAt < 0) {
      return false;
    }
    synchronized (this) {
      if (grantColumns) {
        return true;
      }
      boolean hasGrant = probe(c, GRANT_COLUMN);
      boolean hasGrantToken = probe(c, GRANT_TOKEN_COLUMN);
      if (hasGrant && hasGrantToken) {
        grantColumns = true;
        return true;
      }
      if (!probe(c, "token")) {
        return false; // no fence table (yet): nothing to alter
      }
      try {
        addColumns(c, hasGrant, hasGrantToken);
      } catch (SQLException e) {
        // Another instance may have added them meanwhile; else no privilege, or a lock wait that timed out.
        if (!(probe(c, GRANT_COLUMN) && probe(c, GRANT_TOKEN_COLUMN))) {
          grantColumnsRetryAt = System.nanoTime() + GRANT_COLUMNS_RETRY_NANOS;
          LOG.log(System.Logger.Level.WARNING, "fencing: could not add the columns " + GRANT_COLUMN + ", "
              + GRANT_TOKEN_COLUMN + " to " + fence + " (" + e.getMessage() + "); the fence accepts an equal token "
              + "from any grant until they exist (retried in a minute). Add them with: ALTER TABLE " + fence
              + " ADD COLUMN " + GRANT_COLUMN + " varchar(64); ALTER TABLE " + fence + " ADD COLUMN "
              + GRANT_TOKEN_COLUMN + " bigint");
          return false;
        }
      }
      grantColumns = true;
      return true;
    }
  }

  /** Whether {@code column} of the fence table can be selected (autocommit or rolled back: never a failed tx). */
  private boolean probe(Connection c, String column) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    try (Statement st = c.createStatement()) {
      st.executeQuery("SELECT " + column + " FROM " + fence + " WHERE 1 = 0").close();
      return true;
    } catch (SQLException e) {
      return false;
    } finally {
      if (!autoCommit) {
        c.rollback();
      }
    }
  }

  /** ALTER TABLE for each missing grant column, waiting at most a few seconds for the table's lock. */
  private void addColumns(Connection c, boolean hasGrant, boolean hasGrantToken) throws SQLException {
    Optional<SqlDialect> d = dialect(c);
    SqlDialect dialectOrNull = d.orElse(null);
    boolean autoCommit = c.getAutoCommit();
    String savedWait = null;
    try (Statement st = c.createStatement()) {
      if (dialectOrNull == SqlDialect.POSTGRESQL) {
        // One transaction: SET LOCAL ends with it, and the ALTER gives up instead of queueing every fenced write.
        c.setAutoCommit(false);
        st.execute("SET LOCAL lock_timeout = '1s'");
      } else if (dialectOrNull == SqlDialect.MYSQL) {
        try (ResultSet rs = st.executeQuery("SELECT @@SESSION.lock_wait_timeout")) {
          savedWait = rs.next() ? rs.getString(1) : null;
        }
        st.execute("SET SESSION lock_wait_timeout = 1");
      } else if (!autoCommit) {
        c.setAutoCommit(true);
      }
      if (!hasGrant) {
        st.execute("ALTER TABLE " + fence + " ADD COLUMN " + GRANT_COLUMN + " varchar(64)");
      }
      if (!hasGrantToken) {
        st.execute("ALTER TABLE " + fence + " ADD COLUMN " + GRANT_TOKEN_COLUMN + " bigint");
      }
      if (!c.getAutoCommit()) {
        c.commit();
      }
    } catch (SQLException e) {
      if (!c.getAutoCommit()) {
        rollback(c, e);
      }
      throw e;
    } finally {
      if (savedWait != null && savedWait.chars().allMatch(Character::isDigit)) {
        try (Statement st = c.createStatement()) {
          st.execute("SET SESSION lock_wait_timeout = " + savedWait);
        }
      }
      if (c.getAutoCommit() != autoCommit) {
        c.setAutoCommit(autoCommit);
      }
    }
  }

  /** Steps 1 to 3 of the class comment in one READ COMMITTED transaction; the connection's settings are restored. */
  private Verdict advance(Connection c, String lock, long token, String grant, boolean grants, boolean strict)
      throws SQLException {
    Optional<SqlDialect> d = dialect(c);
    boolean autoCommit = c.getAutoCommit();
    int isolation = c.getTransactionIsolation();
    if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    }
    if (autoCommit) {
      c.setAutoCommit(false);
    }
    try {
      for (int attempt = 1; ; attempt++) {
        try {
          Verdict v = advanceOnce(c, d, lock, token, grant, grants, strict);
          c.commit();
          return v;
        } catch (SQLException e) {
          rollback(c, e);
          String state = e.getSQLState();
          if (attempt == ATTEMPTS || state == null || !state.startsWith("23")) {
            throw e;
          }
        }
      }
    } finally {
      if (autoCommit) {
        c.setAutoCommit(true);
      }
      if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
        c.setTransactionIsolation(isolation);
      }
    }
  }

  private Verdict advanceOnce(Connection c, Optional<SqlDialect> d, String lock, long token, String grant,
      boolean grants, boolean strict) throws SQLException {
    boolean hasStripes = d.isPresent() && FenceTable.lockForAdvance(c, d.get(), schema, lock);
    FenceState row = read(c, lock, grants, true);
    long seen = row == null ? -1 : row.token();
    if (seen >= 0 && (token < seen || (strict && token == seen))) {
      return Verdict.stale(token, seen);
    }
    if (seen == token) {
      return row.replayedBy(token, grant) ? Verdict.replayed(token) : Verdict.accepted(token);
    }
    String grantColumns = grants ? ", " + GRANT_COLUMN + ", " + GRANT_TOKEN_COLUMN : "";
    if (seen < 0) {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + fence + " (lock_name, token" + grantColumns
          + ", updated_at) VALUES (?, ?" + (grants ? ", ?, ?" : "") + ", LOCALTIMESTAMP)")) {
        ps.setString(1, lock);
        ps.setLong(2, token);
        if (grants) {
          setGrant(ps, 3, grant, token);
        }
        ps.executeUpdate();
      }
    } else {
      try (PreparedStatement ps = c.prepareStatement("UPDATE " + fence + " SET token = ?"
          + (grants ? ", " + GRANT_COLUMN + " = ?, " + GRANT_TOKEN_COLUMN + " = ?" : "")
          + ", updated_at = LOCALTIMESTAMP WHERE lock_name = ? AND token < ?")) {
        int i = 1;
        ps.setLong(i++, token);
        if (grants) {
          setGrant(ps, i, grant, token);
          i += 2;
        }
        ps.setString(i++, lock);
        ps.setLong(i, token);
        if (ps.executeUpdate() != 1) {
          throw new SQLException("fencing: the fence row of lock '" + lock + "' changed under its row lock");
        }
      }
    }
    if (d.isPresent()) {
      FenceTable.writeStripes(c, d.get(), schema, lock, token, grant, hasStripes);
    }
    return Verdict.advanced(token);
  }

  /** The grant and the token it is stored for, both NULL without a grant. */
  private static void setGrant(PreparedStatement ps, int index, String grant, long token) throws SQLException {
    if (grant == null) {
      ps.setNull(index, java.sql.Types.VARCHAR);
      ps.setNull(index + 1, java.sql.Types.BIGINT);
    } else {
      ps.setString(index, grant);
      ps.setLong(index + 1, token);
    }
  }

  private Optional<SqlDialect> dialect(Connection c) throws SQLException {
    Optional<SqlDialect> d = dialect;
    if (d == null) {
      d = SqlDialect.fromProductName(c.getMetaData().getDatabaseProductName());
      dialect = d;
    }
    return d;
  }

  private static void rollback(Connection c, SQLException cause) {
    try {
      c.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }
}
