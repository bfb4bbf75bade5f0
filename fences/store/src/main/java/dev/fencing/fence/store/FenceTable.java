package dev.fencing.fence.store;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The fence table {@code fencing_fence} and the protocol every writer of it follows, the SQL fence's triggers (see
 * the SQL fence's {@code SqlFenceDdl}), the JDBC fence store of the HTTP and Kafka fences and {@code fence reset} alike: to move a
 * lock's token, first take the lock the triggers take (PostgreSQL: the exclusive transaction-scoped advisory lock on
 * ({@code 0x46454E43}, {@code hashtext(lock)}); MariaDB/MySQL and H2: all of the lock's rows of
 * {@code fencing_fence_stripe}, when that table exists), then read the fence row {@code FOR UPDATE}, write it, and in
 * MariaDB/MySQL write the stripe rows too (that SQL fence compares against them). One protocol, so a token moved
 * through one path waits for transactions still running under the old token on every other path.
 *
 * <p>One grant rule too: a row keeps the grant id of its token ({@code grant_id}) and the token it was stored for
 * ({@code grant_token}); the grant counts only while {@code grant_token} equals the row's {@code token}. A writer
 * stores both with the token it writes (both NULL when it knows no grant), so a grant never outlives its token.
 */
public final class FenceTable {
  private FenceTable() {}

  /** The qualified fence table: {@code schema.fencing_fence} or {@code fencing_fence}. */
  public static String fence(String schema) {
    return (schema == null ? "" : schema + ".") + FenceSchema.FENCE_TABLE;
  }

  /** The qualified stripe table. */
  public static String stripes(String schema) {
    return (schema == null ? "" : schema + ".") + FenceSchema.STRIPE_TABLE;
  }

  /**
   * Takes, in the current transaction, the lock the SQL fence's triggers take to advance {@code lock}'s token. Returns
   * whether the database has stripe rows (MariaDB/MySQL and H2; they are locked then). The stripe table is looked up
   * every time (advances are rare), so a SQL fence installed while a store runs is honoured from its next advance on.
   */
  public static boolean lockForAdvance(Connection c, SqlDialect d, String schema, String lock) throws SQLException {
    if (d == SqlDialect.POSTGRESQL) {
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(?, hashtext(?))")) {
        ps.setInt(1, FenceSchema.PG_ADVISORY_CLASS);
        ps.setString(2, lock);
        ps.execute();
      }
      return false;
    }
    if (!hasStripes(c, d, schema)) {
      return false;
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT stripe FROM " + stripes(schema)
        + " WHERE lock_name = ? ORDER BY stripe FOR UPDATE")) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          // locking every stripe is the point
        }
      }
    }
    return true;
  }

  /** The token of {@code lock} in {@code fenceTable} (qualified), -1 when it has no row. */
  public static long read(Connection c, String fenceTable, String lock, boolean forUpdate) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT token FROM " + fenceTable + " WHERE lock_name = ?"
        + (forUpdate ? " FOR UPDATE" : ""))) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : -1;
      }
    }
  }

  /**
   * After the fence row: MariaDB/MySQL's stripe rows carry the token too ({@code hasStripes} from the lock step), and
   * the grant stored with it ({@code grant}, null for none), which that SQL fence compares an equal token against.
   */
  public static void writeStripes(Connection c, SqlDialect d, String schema, String lock, long token, String grant,
      boolean hasStripes) throws SQLException {
    if (hasStripes && d == SqlDialect.MYSQL) {
      Set<String> columns = columns(c, d, schema, FenceSchema.STRIPE_TABLE);
      boolean grantColumn = columns.contains(FenceSchema.GRANT_COLUMN);
      boolean grantTokenColumn = columns.contains(FenceSchema.GRANT_TOKEN_COLUMN);
      try (PreparedStatement ps = c.prepareStatement("UPDATE " + stripes(schema) + " SET token = ?"
          + (grantColumn ? ", " + FenceSchema.GRANT_COLUMN + " = ?" : "")
          + (grantTokenColumn ? ", " + FenceSchema.GRANT_TOKEN_COLUMN + " = ?" : "") + " WHERE lock_name = ?")) {
        int i = 1;
        ps.setLong(i++, token);
        if (grantColumn) {
          ps.setString(i++, grant);
        }
        if (grantTokenColumn) {
          if (grant == null) {
            ps.setNull(i++, Types.BIGINT);
          } else {
            ps.setLong(i++, token);
          }
        }
        ps.setString(i, lock);
        ps.executeUpdate();
      }
    }
  }

  /**
   * The assignments that clear the stored grant, to append to the SET list of a write of the fence row's token
   * ({@code ", grant_id = NULL, grant_token = NULL"}, the columns the fence table has), for a writer that does not
   * know the grant of the token it writes ({@code fence reset}): the new token then has no grant.
   */
  public static String clearsGrant(Connection c, SqlDialect d, String schema) throws SQLException {
    Set<String> columns = columns(c, d, schema, FenceSchema.FENCE_TABLE);
    StringBuilder b = new StringBuilder();
    for (String column : List.of(FenceSchema.GRANT_COLUMN, FenceSchema.GRANT_TOKEN_COLUMN)) {
      if (columns.contains(column)) {
        b.append(", ").append(column).append(" = NULL");
      }
    }
    return b.toString();
  }

  /** The columns of {@code table} of {@code schema} (null: the connection's), in lower case. */
  static Set<String> columns(Connection c, SqlDialect d, String schema, String table) throws SQLException {
    String catalog = d == SqlDialect.MYSQL ? (schema != null ? schema : c.getCatalog()) : null;
    String wanted = d == SqlDialect.MYSQL ? null : (schema != null ? schema : c.getSchema());
    DatabaseMetaData md = c.getMetaData();
    Set<String> out = new HashSet<>();
    for (String name : List.of(table, table.toUpperCase(Locale.ROOT))) {
      try (ResultSet rs = md.getColumns(catalog, null, name, null)) {
        while (rs.next()) {
          if (rs.getString("TABLE_NAME").equalsIgnoreCase(table)
              && (wanted == null || wanted.equalsIgnoreCase(rs.getString("TABLE_SCHEM")))) {
            out.add(rs.getString("COLUMN_NAME").toLowerCase(Locale.ROOT));
          }
        }
      }
    }
    return out;
  }

  private static boolean hasStripes(Connection c, SqlDialect d, String schema) throws SQLException {
    String catalog = d == SqlDialect.MYSQL ? (schema != null ? schema : c.getCatalog()) : null;
    String wanted = d == SqlDialect.MYSQL ? null : (schema != null ? schema : c.getSchema());
    DatabaseMetaData md = c.getMetaData();
    for (String name : List.of(FenceSchema.STRIPE_TABLE, FenceSchema.STRIPE_TABLE.toUpperCase(Locale.ROOT))) {
      try (ResultSet rs = md.getTables(catalog, null, name, null)) {
        while (rs.next()) {
          if (rs.getString("TABLE_NAME").equalsIgnoreCase(FenceSchema.STRIPE_TABLE)
              && (wanted == null || wanted.equalsIgnoreCase(rs.getString("TABLE_SCHEM")))) {
            return true;
          }
        }
      }
    }
    return false;
  }
}
