package dev.fencing.protocol;

/**
 * The SQLSTATEs of the fence contract (docs/DESIGN.md section 5). Class {@code FN} is outside every range the SQL standard,
 * PostgreSQL, MariaDB/MySQL and H2 use, so an application or the agent can tell a fence rejection from any other error
 * by the SQLSTATE alone.
 */
public final class SqlStates {

  /** Stale token: lower than the highest token the fence has seen for the lock (or stored on the row). */
  public static final String STALE_TOKEN = "FN001";

  /**
   * Missing or malformed token on a protected table, or a session lock that is missing or names another lock. The
   * fence is left as it was.
   */
  public static final String MISSING_TOKEN = "FN002";

  /** Raised by the agent itself for a write it blocks before it reaches the database (lease expired, standby, ...). */
  public static final String BLOCKED_BY_AGENT = "FN003";

  private SqlStates() {
  }
}
