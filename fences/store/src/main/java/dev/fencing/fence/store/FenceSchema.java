package dev.fencing.fence.store;

/**
 * The names of the fence's own tables and columns that every fence reads and writes (docs/DESIGN.md section 5): the
 * SQL fence's DDL creates them, the HTTP fence's and the Kafka fence's JDBC stores share them.
 */
public final class FenceSchema {

  /** One row per lock: the highest token seen and the grant that sent it. */
  public static final String FENCE_TABLE = "fencing_fence";
  /**
   * H2 and MariaDB/MySQL: rows locked FOR UPDATE that stand in for a shared lock (H2 has none; MariaDB turns a
   * share-mode read into an exclusive one inside a trigger that also writes the table).
   */
  public static final String STRIPE_TABLE = "fencing_fence_stripe";
  /** The column of {@value #FENCE_TABLE} (and the MariaDB/MySQL stripes) holding the grant of the fence's token. */
  public static final String GRANT_COLUMN = "grant_id";
  /**
   * The column beside {@value #GRANT_COLUMN} holding the token that grant was stored for: the stored grant counts only
   * while it equals the row's token (NULL: no grant counts). Every fence reads the grant by this one rule.
   */
  public static final String GRANT_TOKEN_COLUMN = "grant_token";
  /** First key of PostgreSQL's two-key advisory locks: "FENC", apart from the one-bigint key space applications use. */
  public static final int PG_ADVISORY_CLASS = 0x46454E43;

  private FenceSchema() {
  }
}
