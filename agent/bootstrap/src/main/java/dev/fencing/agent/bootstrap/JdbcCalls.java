package dev.fencing.agent.bootstrap;

/**
 * What every JDBC advice does around the {@link JdbcHook} call it makes: a {@code java.sql.SQLException} the hook
 * throws is its deliberate answer (a block, the failed commit of its own transaction, or the driver's own error) and
 * reaches the application; anything else is the agent's failure, counted and logged once per interval, and the call
 * then runs as if the agent were absent. Static, java.base types only: it is reached from advice inlined into driver
 * and pool classes, so it knows SQLException by name (java.sql is not in java.base).
 */
public final class JdbcCalls {
  private JdbcCalls() {}

  /** {@link JdbcHook#beforeExecute}; 0 (not entered) after an agent error. Throws only the hook's SQLException. */
  public static int beforeExecute(Object statement, String sql, int kind) throws Exception {
    try {
      return Fencing.jdbc().beforeExecute(statement, sql, kind);
    } catch (Throwable t) {
      return notEntered(t);
    }
  }

  /** {@link JdbcHook#afterExecute}. Throws only the hook's SQLException: its own transaction did not commit. */
  public static void afterExecute(Object statement, int entered, Throwable error) throws Exception {
    try {
      Fencing.jdbc().afterExecute(statement, entered, error);
    } catch (Throwable t) {
      notEntered(t);
    }
  }

  /** {@link JdbcHook#beforeCommit}; 0 after an agent error. Throws only the hook's SQLException (the rollback). */
  public static int beforeCommit(Object connection) throws Exception {
    try {
      return Fencing.jdbc().beforeCommit(connection);
    } catch (Throwable t) {
      return notEntered(t);
    }
  }

  /**
   * Connection.setAutoCommit({@code autoCommit}): true commits an open transaction ({@link #beforeCommit}), false
   * starts one ({@link JdbcHook#transactionStarting}, 0). Throws only the hook's SQLException.
   */
  public static int beforeSetAutoCommit(Object connection, boolean autoCommit) throws Exception {
    try {
      if (autoCommit) {
        return Fencing.jdbc().beforeCommit(connection);
      }
      Fencing.jdbc().transactionStarting(connection);
      return 0;
    } catch (Throwable t) {
      return notEntered(t);
    }
  }

  /** Rethrows {@code t} when it is a SQLException; otherwise counts it as the agent's failure and returns 0. */
  static int notEntered(Throwable t) throws Exception {
    if (isSqlException(t)) {
      throw (Exception) t;
    }
    // The hook decided its own failures by fail-mode already; what reaches here is past it: the call runs.
    Fencing.hookFailed(Channel.JDBC, false, t);
    return 0;
  }

  /** By name: no loader but the JDK's defines a {@code java.*} class, so the name is the class. */
  static boolean isSqlException(Throwable t) {
    for (Class<?> c = t.getClass(); c != Throwable.class; c = c.getSuperclass()) {
      if (c.getName().equals("java.sql.SQLException")) {
        return true;
      }
    }
    return false;
  }
}
