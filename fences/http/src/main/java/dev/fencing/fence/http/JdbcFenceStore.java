package dev.fencing.fence.http;

import dev.fencing.fence.sql.FenceTable;
import dev.fencing.fence.sql.SqlDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
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
 */
public final class JdbcFenceStore implements FenceStore {

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
  private static final int ATTEMPTS = 3;

  private final DataSource dataSource;
  private final String schema;
  private final String fence;
  /** The database's dialect, once known; empty for a database the SQL fence does not support (no lock step). */
  private volatile Optional<SqlDialect> dialect;

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

  @Override
  public Verdict check(String lock, long token, boolean strict) {
    try (Connection c = dataSource.getConnection()) {
      long seen = FenceTable.read(c, fence, lock, false);
      if (!c.getAutoCommit()) {
        c.rollback();
      }
      if (seen >= 0) {
        if (token < seen || (strict && token == seen)) {
          return Verdict.stale(token, seen);
        }
        if (token == seen) {
          return Verdict.accepted(token);
        }
      }
      return advance(c, lock, token, strict);
    } catch (SQLException e) {
      throw new FenceStoreException("fencing: the JDBC fence store failed to check token " + token + " for lock '"
          + lock + "' in " + fence + ": " + e.getMessage(), e);
    }
  }

  @Override
  public long current(String lock) {
    try (Connection c = dataSource.getConnection()) {
      long seen = FenceTable.read(c, fence, lock, false);
      if (!c.getAutoCommit()) {
        c.rollback();
      }
      return Math.max(seen, 0);
    } catch (SQLException e) {
      throw new FenceStoreException("fencing: the JDBC fence store failed to read lock '" + lock + "' in " + fence
          + ": " + e.getMessage(), e);
    }
  }

  /** Steps 1 to 3 of the class comment in one READ COMMITTED transaction; the connection's settings are restored. */
  private Verdict advance(Connection c, String lock, long token, boolean strict) throws SQLException {
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
          Verdict v = advanceOnce(c, d, lock, token, strict);
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

  private Verdict advanceOnce(Connection c, Optional<SqlDialect> d, String lock, long token, boolean strict)
      throws SQLException {
    boolean hasStripes = d.isPresent() && FenceTable.lockForAdvance(c, d.get(), schema, lock);
    long seen = FenceTable.read(c, fence, lock, true);
    if (seen >= 0 && (token < seen || (strict && token == seen))) {
      return Verdict.stale(token, seen);
    }
    if (seen == token) {
      return Verdict.accepted(token);
    }
    if (seen < 0) {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + fence
          + " (lock_name, token, updated_at) VALUES (?, ?, LOCALTIMESTAMP)")) {
        ps.setString(1, lock);
        ps.setLong(2, token);
        ps.executeUpdate();
      }
    } else {
      try (PreparedStatement ps = c.prepareStatement("UPDATE " + fence
          + " SET token = ?, updated_at = LOCALTIMESTAMP WHERE lock_name = ? AND token < ?")) {
        ps.setLong(1, token);
        ps.setString(2, lock);
        ps.setLong(3, token);
        if (ps.executeUpdate() != 1) {
          throw new SQLException("fencing: the fence row of lock '" + lock + "' changed under its row lock");
        }
      }
    }
    if (d.isPresent()) {
      FenceTable.writeStripes(c, d.get(), schema, lock, token, hasStripes);
    }
    return Verdict.advanced(token);
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
