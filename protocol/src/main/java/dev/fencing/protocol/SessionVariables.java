package dev.fencing.protocol;

/**
 * The SQL session variables the agent sets before a fenced write and the SQL fence's triggers read (docs/DESIGN.md
 * section 5): PostgreSQL custom settings ({@code set_config}/{@code current_setting}) and MariaDB/MySQL and H2 user
 * variables.
 */
public final class SessionVariables {
  /** PostgreSQL setting with the session's lock name. */
  public static final String PG_LOCK = "fencing.lock";
  /** PostgreSQL setting with the session's token (decimal). */
  public static final String PG_TOKEN = "fencing.token";
  /** PostgreSQL setting with the token's signature (when the agent signs). */
  public static final String PG_SIGNATURE = "fencing.signature";
  /** PostgreSQL setting with the grant id of the session's token. */
  public static final String PG_GRANT = "fencing.grant";
  /** MariaDB/MySQL and H2 user variable with the session's lock name. */
  public static final String USER_LOCK = "@fencing_lock";
  /** MariaDB/MySQL and H2 user variable with the session's token. */
  public static final String USER_TOKEN = "@fencing_token";
  /** MariaDB/MySQL and H2 user variable with the token's signature (when the agent signs). */
  public static final String USER_SIGNATURE = "@fencing_signature";
  /** MariaDB/MySQL and H2 user variable with the grant id of the session's token. */
  public static final String USER_GRANT = "@fencing_grant";

  private SessionVariables() {
  }
}
