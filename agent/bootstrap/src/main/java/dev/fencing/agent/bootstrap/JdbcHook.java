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

  /**
   * After the statement returned or threw {@code error} (null when it returned). Throws only when the hook ran the
   * statement in a transaction of its own (a transaction pooler) and that transaction's commit failed: the statement's
   * work did not happen, and the application must hear it.
   */
  void afterExecute(Object statement, int entered, Throwable error) throws Exception;

  /**
   * Before Connection.commit(), or setAutoCommit(true) ({@code autoCommitOn}) that commits an open transaction: a
   * commit makes the transaction's writes visible, so it is a side effect of its own. Throws the SQLException that
   * blocks it (after rolling the transaction back). Returns a value to hand back to {@link #afterCommit}.
   */
  int beforeCommit(Object connection) throws Exception;

  /** After the commit (or setAutoCommit) returned or threw: the transaction is over either way. */
  void afterCommit(Object connection, int entered);

  /** A CopyManager (pgjdbc) was made for {@code connection}: its copyIn calls run on that connection. */
  void copyManagerCreated(Object manager, Object connection);

  /** Connection.setAutoCommit(false): a transaction starts with the next statement. */
  void transactionStarting(Object connection);

  /**
   * The calling thread entered {@code scope} (a declared section, a captured lock): a transaction this thread opened
   * and has not ended yet carries the scope until it ends (docs/DESIGN.md section 4, "Lock scopes"). Never throws.
   */
  default void scopeEntered(LockScope scope) {}

  /** A statement was prepared from {@code sql}: classify it once. */
  void prepared(Object statement, String sql);

  /**
   * The connection rolled back: session settings made in the transaction may be gone. {@code wholeTransaction}: a
   * rollback() that ended the transaction, not a rollback to a savepoint.
   */
  void rolledBack(Object connection, boolean wholeTransaction);

  /**
   * Connection.setSchema or setCatalog({@code name}) ran on {@code connection}: unqualified table names may now
   * resolve elsewhere (unless {@code name} is the schema already known, the session's current schema is read again
   * before the next write is judged; a pool that sets the same schema on every checkout costs nothing).
   */
  default void schemaChanged(Object connection, String name) {}

  /** Kinds of call, for {@link #beforeExecute}. */
  int SQL = 0;
  int PREPARED = 1;
  int BATCH = 2;
  /** PostgreSQL's CopyManager.copyIn: {@code statement} is the manager, {@code sql} its COPY ... FROM STDIN. */
  int COPY = 3;

  /** Before the agent core has installed the real hook (or when the JDBC instrumentation is off): does nothing. */
  JdbcHook NOOP = new JdbcHook() {
    @Override
    public int beforeExecute(Object statement, String sql, int kind) {
      return 0;
    }

    @Override
    public void afterExecute(Object statement, int entered, Throwable error) {}

    @Override
    public int beforeCommit(Object connection) {
      return 0;
    }

    @Override
    public void afterCommit(Object connection, int entered) {}

    @Override
    public void transactionStarting(Object connection) {}

    @Override
    public void copyManagerCreated(Object manager, Object connection) {}

    @Override
    public void prepared(Object statement, String sql) {}

    @Override
    public void rolledBack(Object connection, boolean wholeTransaction) {}
  };
}
