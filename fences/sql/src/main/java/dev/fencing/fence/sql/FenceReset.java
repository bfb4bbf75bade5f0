package dev.fencing.fence.sql;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;

/**
 * Sets the fence token of one lock in {@code fencing_fence} (the SQL fence's table, also the JDBC fence store of the
 * HTTP and Kafka fences) to a given value: the repair for a poisoned fence (a forged or buggy huge token that locks
 * every legitimate writer out). The caller ({@code fence reset}) decides the value from the coordinator; this class
 * only writes it, in one READ COMMITTED transaction that first takes the lock the fence's own writers take to advance
 * (PostgreSQL's exclusive advisory lock of the lock, MariaDB/MySQL and H2 all of its stripe rows), so the reset waits
 * for transactions still running under the old fence token and no write interleaves with it. MariaDB/MySQL's stripe
 * rows carry the token too and are set with it.
 */
public final class FenceReset {

  private FenceReset() {
  }

  /** The qualified fence table, for messages: {@code schema.fencing_fence} or {@code fencing_fence}. */
  public static String table(String schema) {
    return (schema == null ? "" : schema + ".") + SqlFenceDdl.FENCE_TABLE;
  }

  /** The fence token of {@code lock}, -1 when the table has no row for it. */
  public static long read(Connection c, String schema, String lock) throws SQLException {
    return read(c, table(schema), lock, false);
  }

  /** The fence is above the requested token and lowering was not allowed: nothing was written. */
  public static final class Refused extends RuntimeException {
    private final long current;

    Refused(long current) {
      super("the fence token " + current + " is above the requested token");
      this.current = current;
    }

    public long current() {
      return current;
    }
  }

  /**
   * Sets the fence token of {@code lock} to {@code token} (inserting the row when there is none) and commits; returns
   * the token it replaced, -1 when there was no row. An equal token writes nothing. A fence above {@code token} is
   * lowered only with {@code lower}; otherwise {@link Refused} is thrown and nothing is written (the comparison is made
   * under the lock, in the same transaction as the write). The connection's auto-commit and isolation are restored.
   */
  public static long set(Connection c, String schema, String lock, long token, boolean lower) throws SQLException {
    if (schema != null && !TableName.isIdentifier(schema)) {
      throw new IllegalArgumentException("invalid schema '" + schema + "': letters, digits and _ only");
    }
    SqlDialect dialect = SqlDialect.detect(c);
    String fence = table(schema);
    String stripes = (schema == null ? "" : schema + ".") + SqlFenceDdl.STRIPE_TABLE;
    boolean autoCommit = c.getAutoCommit();
    int isolation = c.getTransactionIsolation();
    c.setAutoCommit(false);
    if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    }
    try {
      boolean hasStripes = false;
      if (dialect == SqlDialect.POSTGRESQL) {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(?, hashtext(?))")) {
          ps.setInt(1, SqlFenceDdl.PG_ADVISORY_CLASS);
          ps.setString(2, lock);
          ps.execute();
        }
      } else if (hasStripes(c, dialect, schema)) {
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
      long before = read(c, fence, lock, true);
      if (before == token || (before > token && !lower)) {
        c.rollback();
        if (before > token) {
          throw new Refused(before);
        }
        return before;
      }
      String sql = before < 0
          ? "INSERT INTO " + fence + " (token, updated_at, lock_name) VALUES (?, LOCALTIMESTAMP, ?)"
          : "UPDATE " + fence + " SET token = ?, updated_at = LOCALTIMESTAMP WHERE lock_name = ?";
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setLong(1, token);
        ps.setString(2, lock);
        ps.executeUpdate();
      }
      if (hasStripes && dialect == SqlDialect.MYSQL) {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + stripes + " SET token = ? WHERE lock_name = ?")) {
          ps.setLong(1, token);
          ps.setString(2, lock);
          ps.executeUpdate();
        }
      }
      c.commit();
      return before;
    } catch (Refused e) {
      throw e;
    } catch (SQLException | RuntimeException e) {
      try {
        c.rollback();
      } catch (SQLException r) {
        e.addSuppressed(r);
      }
      throw e;
    } finally {
      c.setAutoCommit(autoCommit);
      if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
        c.setTransactionIsolation(isolation);
      }
    }
  }

  private static long read(Connection c, String fence, String lock, boolean forUpdate) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT token FROM " + fence + " WHERE lock_name = ?"
        + (forUpdate ? " FOR UPDATE" : ""))) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : -1;
      }
    }
  }

  private static boolean hasStripes(Connection c, SqlDialect d, String schema) throws SQLException {
    String catalog = d == SqlDialect.MYSQL ? (schema != null ? schema : c.getCatalog()) : null;
    String wanted = d == SqlDialect.MYSQL ? null : (schema != null ? schema : c.getSchema());
    DatabaseMetaData md = c.getMetaData();
    for (String name : List.of(SqlFenceDdl.STRIPE_TABLE, SqlFenceDdl.STRIPE_TABLE.toUpperCase(Locale.ROOT))) {
      try (ResultSet rs = md.getTables(catalog, null, name, null)) {
        while (rs.next()) {
          if (rs.getString("TABLE_NAME").equalsIgnoreCase(SqlFenceDdl.STRIPE_TABLE)
              && (wanted == null || wanted.equalsIgnoreCase(rs.getString("TABLE_SCHEM")))) {
            return true;
          }
        }
      }
    }
    return false;
  }
}
