package dev.fencing.fence.sql;

import dev.fencing.fence.store.FenceTable;
import dev.fencing.fence.store.SqlDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Sets the fence token of one lock in {@code fencing_fence} (the SQL fence's table, also the JDBC fence store of the
 * HTTP and Kafka fences) to a given value: the repair for a poisoned fence (a forged or buggy huge token that locks
 * every legitimate writer out). The caller ({@code fence reset}) decides the value from the coordinator; this class
 * only writes it, in one READ COMMITTED transaction that first takes the lock the fence's own writers take to advance
 * (PostgreSQL's exclusive advisory lock of the lock, MariaDB/MySQL and H2 all of its stripe rows), so the reset waits
 * for transactions still running under the old fence token and no write interleaves with it. MariaDB/MySQL's stripe
 * rows carry the token too and are set with it. The grant stored with the old token is cleared, in the fence row and
 * the stripes ({@code grant_id} and {@code grant_token} NULL: the reset token is accepted from any grant until the
 * next advance stores one).
 *
 * <p>The Kafka consumer fence keeps its state per partition in {@value #KAFKA_TABLE} (one row per advance); when that
 * table exists, the lock's advances above the token are part of the fence too: they are deleted in the same transaction
 * (with {@code lower}; without it they refuse the reset like a higher fence row), so each partition's fence falls back
 * to its last advance at or below the token.
 */
public final class FenceReset {

  /** The Kafka consumer fence's table (fences/kafka), in the same schema. */
  public static final String KAFKA_TABLE = "fencing_kafka_fence";

  private FenceReset() {
  }

  /** The qualified Kafka fence table when it exists, else null (read from the metadata: a failed query would abort). */
  private static String kafkaTable(Connection c, String schema) throws SQLException {
    java.sql.DatabaseMetaData md = c.getMetaData();
    String product = md.getDatabaseProductName().toLowerCase(java.util.Locale.ROOT);
    boolean mysql = product.contains("maria") || product.contains("mysql");
    String where = schema != null ? schema : mysql ? c.getCatalog() : c.getSchema();
    java.util.Set<String> variants = new java.util.LinkedHashSet<>();
    variants.add(where);
    if (where != null) {
      variants.add(where.toLowerCase(java.util.Locale.ROOT));
      variants.add(where.toUpperCase(java.util.Locale.ROOT));
    }
    for (String name : new String[] {KAFKA_TABLE, KAFKA_TABLE.toUpperCase(java.util.Locale.ROOT)}) {
      for (String w : variants) {
        try (java.sql.ResultSet rs = mysql ? md.getTables(w, null, name, null) : md.getTables(null, w, name, null)) {
          if (rs.next()) {
            return schema == null ? KAFKA_TABLE : schema + "." + KAFKA_TABLE;
          }
        }
      }
    }
    return null;
  }

  private static long kafkaMax(Connection c, String table, String lock) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT MAX(token) FROM " + table + " WHERE lock_name = ?")) {
      ps.setString(1, lock);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        long max = rs.next() ? rs.getLong(1) : -1;
        return rs.wasNull() ? -1 : max;
      }
    }
  }

  /** The qualified fence table, for messages: {@code schema.fencing_fence} or {@code fencing_fence}. */
  public static String table(String schema) {
    return FenceTable.fence(schema);
  }

  /** The fence token of {@code lock}, -1 when the table has no row for it. */
  public static long read(Connection c, String schema, String lock) throws SQLException {
    return FenceTable.read(c, table(schema), lock, false);
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
    boolean autoCommit = c.getAutoCommit();
    int isolation = c.getTransactionIsolation();
    c.setAutoCommit(false);
    if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    }
    try {
      boolean hasStripes = FenceTable.lockForAdvance(c, dialect, schema, lock);
      long before = FenceTable.read(c, fence, lock, true);
      String kafka = kafkaTable(c, schema);
      long kafkaAbove = kafka == null ? -1 : kafkaMax(c, kafka, lock);
      if (!lower && (before > token || kafkaAbove > token)) {
        c.rollback();
        throw new Refused(Math.max(before, kafkaAbove));
      }
      if (kafkaAbove > token) {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + kafka + " WHERE lock_name = ? AND token > ?")) {
          ps.setString(1, lock);
          ps.setLong(2, token);
          ps.executeUpdate();
        }
      }
      if (before == token) {
        c.commit();
        return before;
      }
      // The grant the token was issued to is unknown here: the stored one (of whoever wrote the fence) goes.
      String sql = before < 0
          ? "INSERT INTO " + fence + " (token, updated_at, lock_name) VALUES (?, LOCALTIMESTAMP, ?)"
          : "UPDATE " + fence + " SET token = ?, updated_at = LOCALTIMESTAMP"
              + FenceTable.clearsGrant(c, dialect, schema) + " WHERE lock_name = ?";
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setLong(1, token);
        ps.setString(2, lock);
        ps.executeUpdate();
      }
      FenceTable.writeStripes(c, dialect, schema, lock, token, null, hasStripes);
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
}
