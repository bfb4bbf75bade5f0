package dev.fencing.fence.http;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
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
 *
 * <p>Advances wait for lock holders in the database: give the DataSource's connections a lock or statement timeout.
 */
public final class JdbcFenceStore implements FenceStore {

  static final String FENCE_TABLE = "fencing_fence";
  static final String STRIPE_TABLE = "fencing_fence_stripe";
  /** First key of the SQL fence's PostgreSQL advisory locks: "FENC" (SqlFenceDdl.PG_ADVISORY_CLASS). */
  static final int PG_ADVISORY_CLASS = 0x46454E43;
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
  private static final int ATTEMPTS = 3;

  enum Dialect { POSTGRESQL, MYSQL, H2, OTHER }

  private final DataSource dataSource;
  private final String schema;
  private final String fence;
  private final String stripes;
  private volatile Dialect dialect;

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
    String prefix = schema == null ? "" : schema + ".";
    this.fence = prefix + FENCE_TABLE;
    this.stripes = prefix + STRIPE_TABLE;
  }

  @Override
  public Verdict check(String lock, long token, boolean strict) {
    try (Connection c = dataSource.getConnection()) {
      long seen = read(c, lock, false);
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
      long seen = read(c, lock, false);
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
    Dialect d = dialect(c);
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

  private Verdict advanceOnce(Connection c, Dialect d, String lock, long token, boolean strict)
      throws SQLException {
    boolean hasStripes = false;
    if (d == Dialect.POSTGRESQL) {
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(?, hashtext(?))")) {
        ps.setInt(1, PG_ADVISORY_CLASS);
        ps.setString(2, lock);
        ps.execute();
      }
    } else if ((d == Dialect.MYSQL || d == Dialect.H2) && hasStripes(c, d)) {
      hasStripes = true;
      try (PreparedStatement ps = c.prepareStatement("SELECT stripe FROM " + stripes
          + " WHERE lock_name = ? ORDER BY stripe FOR UPDATE")) {
        ps.setString(1, lock);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            // locking every stripe is the point
          }
        }
      }
    }
    long seen = read(c, lock, true);
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
    if (hasStripes && d == Dialect.MYSQL) {
      try (PreparedStatement ps = c.prepareStatement("UPDATE " + stripes + " SET token = ? WHERE lock_name = ?")) {
        ps.setLong(1, token);
        ps.setString(2, lock);
        ps.executeUpdate();
      }
    }
    return Verdict.advanced(token);
  }

  /** The fence token of {@code lock}, -1 when it has no row. */
  private long read(Connection c, String lock, boolean forUpdate) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT token FROM " + fence + " WHERE lock_name = ?"
        + (forUpdate ? " FOR UPDATE" : ""))) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : -1;
      }
    }
  }

  /**
   * Whether the SQL fence's stripe table exists beside the fence table. Asked on every advance (advances are rare), so
   * that a SQL fence installed while this store runs is honoured from its first advance on.
   */
  private boolean hasStripes(Connection c, Dialect d) throws SQLException {
    String catalog = d == Dialect.MYSQL ? (schema != null ? schema : c.getCatalog()) : null;
    String wanted = d == Dialect.MYSQL ? null : (schema != null ? schema : c.getSchema());
    DatabaseMetaData md = c.getMetaData();
    for (String name : List.of(STRIPE_TABLE, STRIPE_TABLE.toUpperCase(Locale.ROOT))) {
      try (ResultSet rs = md.getTables(catalog, null, name, null)) {
        while (rs.next()) {
          if (rs.getString("TABLE_NAME").equalsIgnoreCase(STRIPE_TABLE)
              && (wanted == null || wanted.equalsIgnoreCase(rs.getString("TABLE_SCHEM")))) {
            return true;
          }
        }
      }
    }
    return false;
  }

  private Dialect dialect(Connection c) throws SQLException {
    Dialect d = dialect;
    if (d == null) {
      String p = c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
      d = p.contains("postgresql") ? Dialect.POSTGRESQL
          : p.contains("mariadb") || p.contains("mysql") ? Dialect.MYSQL
          : p.equals("h2") ? Dialect.H2 : Dialect.OTHER;
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
