package dev.fencing.agent.bootstrap;

/**
 * What the JDBC advice (inlined into driver and pool classes) calls. Implemented by the agent core; java.base types
 * only, so statements and connections travel as {@code Object}.
 */
public interface JdbcHook {
  /**
   * Before a statement executes. {@code sql} is the statement text, or null for a prepared statement (classified when
   * it was prepared) or a batch. Returns a value to hand back to {@link #afterExecute}. Throws the SQLException that
   * blocks the call; then the call never reaches the database.
   */
  int beforeExecute(Object statement, String sql, int kind) throws Exception;

  /** After the statement returned or threw {@code error} (null when it returned). */
  void afterExecute(Object statement, int entered, Throwable error);

  /** A statement was prepared from {@code sql}: classify it once. */
  void prepared(Object statement, String sql);

  /** The connection rolled back: session settings made in the transaction may be gone. */
  void rolledBack(Object connection);

  /** Kinds of call, for {@link #beforeExecute}. */
  int SQL = 0;
  int PREPARED = 1;
  int BATCH = 2;

  /** Before the agent core has installed the real hook (or when the JDBC instrumentation is off): does nothing. */
  JdbcHook NOOP = new JdbcHook() {
    @Override
    public int beforeExecute(Object statement, String sql, int kind) {
      return 0;
    }

    @Override
    public void afterExecute(Object statement, int entered, Throwable error) {}

    @Override
    public void prepared(Object statement, String sql) {}

    @Override
    public void rolledBack(Object connection) {}
  };
}
