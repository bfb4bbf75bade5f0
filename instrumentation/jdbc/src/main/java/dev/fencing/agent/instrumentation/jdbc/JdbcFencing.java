package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.JdbcHook;
import dev.fencing.agent.bootstrap.LockScope;
import dev.fencing.agent.bootstrap.ReentryGuard;
import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.instrumentation.WeakIdentityCache;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.policy.RejectionCounters;
import dev.fencing.agent.policy.SideEffectCounters;
import dev.fencing.protocol.SqlStates;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The JDBC side of the policy. Per statement: classify (cached per prepared statement), find whether a fence judges
 * it, ask the policy, block with a SQLException or make sure the session carries the current (lock, token).
 *
 * <ul>
 *   <li>A fence protects tables: after the lease's deadline a write is sent with the last token only when a fence
 *       judges its target table ({@link DatabaseFences}); other writes to the same database are blocked.
 *   <li>On a database with any fence, every statement's session pair is right or cleared, reads included: a SELECT
 *       may call a function that writes.
 *   <li>Direct connections carry the pair in the session, set only when the connection does not carry it yet (no
 *       extra round trip in the steady state) and forgotten on rollback. Behind a transaction pooler
 *       ({@code fencing.jdbc.pooler}) the next transaction may run on another client's server session, so the pair
 *       is set per transaction (PostgreSQL {@code set_config(..., true)}) and an autocommit write runs in a
 *       transaction of its own.
 *   <li>A commit is a side effect: after the deadline, the commit of a transaction that wrote where no fence judges
 *       is blocked (rolled back).
 *   <li>A transaction carries the lock scope it was opened in, made a statement in, or whose section its thread
 *       entered while it was open (a {@code @Transactional} proxy opens it before the section and commits after): its
 *       statements made outside every scope (a JPA flush at commit) are decided by that scope, and its commit is
 *       judged by the scope and the grant of each unjudged write.
 *   <li>On a fenced database the session's idle time inside a transaction is bounded
 *       ({@code fencing.jdbc.idle-in-transaction-timeout}), so that a frozen holder's open transaction cannot hold
 *       its successor back for longer than about one TTL.
 * </ul>
 */
final class JdbcFencing implements JdbcHook {
  /** No token equals it: the next tagged write sets the pair again, the next untagged one clears it. */
  private static final long UNKNOWN_TOKEN = -1;

  /** SQLSTATE of a write the agent blocked before it reached the database. */
  static final String BLOCKED_SQLSTATE = SqlStates.BLOCKED_BY_AGENT;
  static final String STALE_SQLSTATE = SqlStates.STALE_TOKEN;
  static final String MISSING_SQLSTATE = SqlStates.MISSING_TOKEN;

  /** Fence detection results kept per JDBC URL, at most. */
  static final int MAX_REMEMBERED_URLS = 256;

  private static final AgentLog LOG = AgentLog.get(JdbcFencing.class);

  /**
   * {@link #beforeExecute} results: not entered (agent thread), nested in another hooked call, outermost, outermost
   * in a transaction the hook opened for it (an autocommit write behind a transaction pooler), outermost COMMIT text.
   */
  private static final int NOT_ENTERED = 0;
  private static final int NESTED = 1;
  private static final int OUTERMOST = 2;
  private static final int WRAPPED = 3;
  private static final int COMMITTING = 4;

  /** What a prepared statement is, found once when it was prepared. */
  private static final class Prepared {
    final boolean write;
    final String sql;
    final long target;
    /** A session statement that may change where unqualified names resolve ({@link SqlClassifier#switchesSchema}). */
    final boolean switchesSchema;

    Prepared(boolean write, String sql, long target) {
      this.write = write;
      this.sql = sql;
      this.target = target;
      this.switchesSchema = !write && SqlClassifier.switchesSchema(sql);
    }
  }

  /** What the agent knows about one physical connection. */
  private static final class SessionState {
    final SessionDialect dialect;
    final DatabaseFences fences;
    /** The pair is set per transaction (a transaction pooler), not per session. */
    final boolean perTransaction;
    /**
     * Schema (or database) unqualified names resolve in, read when the session is met and again after a statement or
     * call that may switch it ({@link #schemaStale}); null when no table is fenced.
     */
    volatile String schema;
    /** setSchema/setCatalog, SET search_path, USE, or a rollback that may undo one ran: read the schema again. */
    volatile boolean schemaStale;
    /** The lock last set (per session, or in the open transaction); null while it carries no pair. */
    volatile String carriedLock;
    /** The token last set; {@link #UNKNOWN_TOKEN} after a failure or rollback may have undone it. */
    volatile long carriedToken;
    volatile String carriedSignature;
    volatile String carriedGrant;
    /**
     * The open transaction wrote where no fence judges, decided outside every lock scope: its commit is a side effect
     * of its own, judged by the thread's gate.
     */
    volatile boolean unjudged;
    /**
     * The lock scope the open transaction carries: the one current when it began or when one of its statements ran,
     * or the one its thread entered while it was open. Its statements made outside every scope are decided by it.
     */
    volatile LockScope txScope;
    /** The thread that opened the transaction (setAutoCommit(false)), until it ends. */
    volatile Thread openedBy;
    /**
     * Unjudged writes of the open transaction made in a lock scope: the scope and the decision of each (distinct
     * pairs), judged again at the commit by that scope's gate and grant. Used by the connection's one thread at a time.
     */
    private LockScope[] scopedUnjudged = NO_SCOPES;
    private Decision[] scopedDecisions = NO_DECISIONS;
    private int scopedCount;
    /** A database of fencing.exempt.jdbc: nothing on this session is a lock-protected side effect. */
    final boolean exempt;

    SessionState(SessionDialect dialect, DatabaseFences fences, boolean perTransaction, String schema) {
      this(dialect, fences, perTransaction, schema, false);
    }

    SessionState(SessionDialect dialect, DatabaseFences fences, boolean perTransaction, String schema,
        boolean exempt) {
      this.exempt = exempt;
      this.dialect = dialect;
      this.fences = fences;
      this.perTransaction = perTransaction;
      this.schema = schema;
    }

    boolean carries(Decision d) {
      return carriedToken == d.token() && d.lock().equals(carriedLock)
          && Objects.equals(carriedSignature, d.signature()) && Objects.equals(carriedGrant, d.grant());
    }

    void carry(Decision d) {
      carriedLock = d.lock();
      carriedToken = d.token();
      carriedSignature = d.signature();
      carriedGrant = d.grant();
    }

    void carryNothing() {
      carriedLock = null;
      carriedToken = 0;
      carriedSignature = null;
      carriedGrant = null;
    }

    /** An unjudged write made in {@code scope} under {@code d}, unless one with the same pair is known already. */
    void unjudgedIn(LockScope scope, Decision d) {
      for (int i = 0; i < scopedCount; i++) {
        if (scopedUnjudged[i] == scope && scopedDecisions[i] == d) {
          return;
        }
      }
      if (scopedCount == scopedUnjudged.length) {
        int n = Math.max(2, scopedCount * 2); // once per connection, and again only for a transaction of many scopes
        scopedUnjudged = java.util.Arrays.copyOf(scopedUnjudged, n);
        scopedDecisions = java.util.Arrays.copyOf(scopedDecisions, n);
      }
      scopedUnjudged[scopedCount] = scope;
      scopedDecisions[scopedCount] = d;
      scopedCount++;
    }

    boolean anyUnjudged() {
      return unjudged || scopedCount > 0;
    }

    /** The transaction ended (commit, rollback): what it carried or wrote is over. */
    void endTransaction() {
      unjudged = false;
      txScope = null;
      openedBy = null;
      for (int i = 0; i < scopedCount; i++) {
        scopedUnjudged[i] = null;
        scopedDecisions[i] = null;
      }
      scopedCount = 0;
      if (perTransaction) {
        carryNothing();
      }
    }
  }

  private static final LockScope[] NO_SCOPES = new LockScope[0];
  private static final Decision[] NO_DECISIONS = new Decision[0];

  private final WeakIdentityCache<Object, Prepared> preparedStatements = new WeakIdentityCache<>();
  /**
   * The session whose transaction the thread opened last, so that a lock scope the thread enters while it is open
   * joins it ({@link #scopeEntered}). Checked against {@link SessionState#openedBy} before use, so a stale entry
   * (the transaction ended) changes nothing.
   */
  private final ThreadLocal<SessionState> openedOnThread = new ThreadLocal<>();
  private final WeakIdentityCache<Object, SessionState> sessions = new WeakIdentityCache<>();
  private final WeakIdentityCache<Object, Connection> copyManagers = new WeakIdentityCache<>();
  private final ConcurrentHashMap<String, DatabaseFences> fencesByUrl = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Boolean> pooledByUrl = new ConcurrentHashMap<>();
  private final List<String> fencedUrlPrefixes;
  private final AgentConfig.JdbcPooler pooler;
  private final String[] writeFunctions;
  /** Milliseconds, or -1: leave the database's setting. */
  private final long idleTimeoutMillis;
  private final RejectionCounters rejections;
  /** fencing.exempt.jdbc: URL prefixes of databases whose statements are never a lock-protected side effect. */
  private final List<String> exemptUrlPrefixes;
  private final SideEffectCounters sideEffects;

  JdbcFencing(List<String> fencedUrlPrefixes, RejectionCounters rejections) {
    this(fencedUrlPrefixes, AgentConfig.JdbcPooler.AUTO, List.of(), Duration.ZERO, rejections);
  }

  JdbcFencing(List<String> fencedUrlPrefixes, AgentConfig.JdbcPooler pooler, List<String> writeFunctions,
      Duration idleInTransactionTimeout, RejectionCounters rejections) {
    this(fencedUrlPrefixes, pooler, writeFunctions, idleInTransactionTimeout, rejections, List.of(),
        new SideEffectCounters());
  }

  JdbcFencing(List<String> fencedUrlPrefixes, AgentConfig.JdbcPooler pooler, List<String> writeFunctions,
      Duration idleInTransactionTimeout, RejectionCounters rejections, List<String> exemptUrlPrefixes,
      SideEffectCounters sideEffects) {
    this.exemptUrlPrefixes = exemptUrlPrefixes;
    this.sideEffects = sideEffects;
    this.fencedUrlPrefixes = fencedUrlPrefixes;
    this.pooler = pooler;
    this.writeFunctions = writeFunctions.toArray(new String[0]);
    this.idleTimeoutMillis = idleInTransactionTimeout.isZero() ? -1 : idleInTransactionTimeout.toMillis();
    this.rejections = rejections;
  }

  @Override
  public void prepared(Object statement, String sql) {
    if (statement != null && preparedStatements.get(statement) == null) {
      boolean write = SqlClassifier.classify(sql, writeFunctions) == SqlClassifier.Kind.WRITE;
      // The target is found for every dialect's rule at once: TRUNCATE counts only where its fence fires, which is
      // checked against the session's dialect when the statement runs.
      preparedStatements.put(statement, new Prepared(write, sql, write ? target(sql, true) : SqlTarget.NONE));
    }
  }

  /**
   * {@link SqlTarget#find}, except that a write naming a declared write function ({@code fencing.jdbc.write-functions})
   * has no known target: the function may write other tables than the statement's own, which that table's fence does
   * not judge (an INSERT whose SELECT calls it may insert no row at all).
   */
  private long target(String sql, boolean truncateFenced) {
    long t = SqlTarget.find(sql, truncateFenced);
    if (t != SqlTarget.NONE) {
      for (String f : writeFunctions) {
        if (SqlClassifier.containsCode(sql, 0, f)) {
          return SqlTarget.NONE;
        }
      }
    }
    return t;
  }

  @Override
  public void copyManagerCreated(Object manager, Object connection) {
    if (manager != null && connection instanceof Connection) {
      copyManagers.put(manager, (Connection) connection);
    }
  }

  /** The connection a statement (or a CopyManager) runs on. */
  private Connection connectionOf(Object statement, int kind) throws SQLException {
    if (kind == COPY) {
      Connection c = copyManagers.get(statement);
      if (c == null) {
        // Made before the agent attached: not a driver's refusal but the hook unable to do its part (fail-mode).
        throw new IllegalStateException("a CopyManager made before the agent started: its connection is not known");
      }
      return c;
    }
    return ((Statement) statement).getConnection();
  }

  @Override
  public int beforeExecute(Object statement, String sql, int kind) throws Exception {
    if (ReentryGuard.isAgentThread()) {
      return NOT_ENTERED;
    }
    if (!ReentryGuard.enter()) {
      // Nested: a pool's proxy calling the driver, a driver method calling another, or our own session statement.
      // The outermost call decides and counts.
      return NESTED;
    }
    boolean write = true; // until classified: a call the hook could not look at counts as a write
    try {
      String text = sql;
      long target = SqlTarget.NONE;
      boolean targetFound = false;
      boolean switchesSchema = false;
      if (kind == COPY) {
        write = true; // COPY ... FROM STDIN: rows into the table it names, through its INSERT triggers
      } else if (kind == SQL) {
        SqlClassifier.Kind k = SqlClassifier.classify(sql, writeFunctions);
        if (k == SqlClassifier.Kind.CONTROL) {
          return control((Statement) statement, sql);
        }
        write = k == SqlClassifier.Kind.WRITE;
      } else {
        // A prepared statement, or its batch (the same statement many times); a plain Statement's batch has no
        // known text, so its writes count as unjudged.
        Prepared p = preparedStatements.get(statement);
        write = kind == BATCH || p == null || p.write;
        if (p != null) {
          text = p.sql;
          target = p.target;
          targetFound = true;
          switchesSchema = p.switchesSchema;
        }
      }
      Connection physical = physical(connectionOf(statement, kind));
      SessionState session = session(physical);
      if (switchesSchema) {
        session.schemaStale = true; // a prepared SET search_path / USE: read the schema again before the next write
      }
      if (session.exempt) {
        // fencing.exempt.jdbc: untagged, never blocked, its commits unjudged; decided once, when the session was met.
        if (write) {
          sideEffects.recordExempt(Channel.JDBC, false);
        }
        return OUTERMOST;
      }
      DatabaseFences fences = session.fences;
      boolean fenced;
      if (!write || fences.allFenced()) {
        fenced = fences.anyFence();
      } else if (!fences.anyFence() || text == null) {
        fenced = false;
      } else {
        if (!targetFound) {
          target = target(text, session.dialect.truncateFenced());
        } else if (target != SqlTarget.NONE && !session.dialect.truncateFenced()
            && SqlClassifier.startsWithWord(text, "TRUNCATE")) {
          target = SqlTarget.NONE;
        }
        if (session.schemaStale) {
          session.schemaStale = false; // before the read: a switch during it marks it stale again
          session.schema = currentSchema(physical, session.dialect);
        }
        fenced = fences.judges(text, target, session.schema);
      }
      LockScope scope = decidingScope(physical, session);
      Decision d = scope == null ? Fencing.decide(Channel.JDBC, write, fenced)
          : scope.gate().decide(Channel.JDBC, write, fenced);
      if (d.isBlock()) {
        ReentryGuard.exit();
        throw new SQLException(d.blockMessage(Channel.JDBC), BLOCKED_SQLSTATE);
      }
      if (write && !fenced) {
        if (scope == null) {
          session.unjudged = true;
        } else {
          session.unjudgedIn(scope, d);
        }
      }
      if (!write && !fences.anyFence()) {
        return OUTERMOST; // a read where no fence is: nothing it could carry matters
      }
      return session.perTransaction ? tagTransaction(physical, session, d, write, text)
          : tagSession(physical, session, d);
    } catch (SQLException e) {
      if (BLOCKED_SQLSTATE.equals(e.getSQLState())) {
        throw e;
      }
      // The driver refused to answer about this statement or connection (closed, transaction aborted): the
      // application's own call meets the same state and gets the driver's own error. Not an agent failure.
      LOG.debug("JDBC hook could not inspect a statement, letting it run: " + AgentLog.describe(e));
      return OUTERMOST;
    } catch (Throwable t) {
      // Whatever it is (a driver's RuntimeException, a LinkageError, our own bug), it must not reach the application
      // as an error its call would not have had, nor leave the re-entry guard entered (every later statement on this
      // thread would then be taken for a nested call, and neither counted nor blocked).
      return failed(write, t);
    }
  }

  /**
   * The lock scope that decides a statement on {@code s}: the thread's, which an open transaction of the session joins
   * if it carries none yet; else, outside every scope, the one the session's open transaction carries (a flush or a
   * statement made after the section returned, before the commit); null for neither. A transaction is known to be open
   * from the driver's autocommit flag, read only when a scope is involved.
   */
  private static LockScope decidingScope(Connection physical, SessionState s) throws SQLException {
    if (!TokenContext.scopesEntered()) {
      return null; // no section or captured lock entered yet in this JVM: the hot path pays one volatile read
    }
    LockScope thread = TokenContext.scope();
    LockScope tx = s.txScope;
    if (thread != null) {
      if (tx == null && !physical.getAutoCommit()) {
        s.txScope = thread;
      }
      return thread;
    }
    if (tx == null) {
      return null;
    }
    if (physical.getAutoCommit()) {
      s.txScope = null; // the transaction ended without the hook seeing it (a driver's own reset): nothing to carry
      return null;
    }
    return tx;
  }

  /** Session scope: set the pair when the session does not carry it yet, clear it when the call must carry none. */
  private int tagSession(Connection physical, SessionState s, Decision d) throws SQLException {
    if (d.isTag()) {
      if (!s.carries(d)) {
        s.dialect.setPair(physical, d.lock(), d.token(), d.signature(), d.grant(), false, idleBound(s));
        s.carry(d);
      }
    } else if (s.carriedLock != null) {
      // An untagged call (standby read, no lease of our own, fail-mode open) after a tagged one on this session: the
      // session must not still vouch for the earlier token (an inbound request's, or a lost lease's).
      s.dialect.clearPair(physical, false);
      s.carryNothing();
    }
    return OUTERMOST;
  }

  /**
   * Transaction scope (behind a transaction pooler): the pair goes with the transaction, which the pooler runs on one
   * server session from its first statement to its end. An autocommit write gets a transaction of its own (the hook
   * commits it when the statement returns), except on a database with no fence (nothing there reads the pair) and for
   * a statement that cannot run in a transaction ({@code VACUUM}, {@code CREATE INDEX CONCURRENTLY}, ...), which go as
   * they are, without the pair; an autocommit read carries nothing, so a function it calls that writes a fenced table
   * fails with FN002 rather than borrow whatever another client left in the server session.
   */
  private int tagTransaction(Connection physical, SessionState s, Decision d, boolean write, String text)
      throws SQLException {
    boolean autoCommit = physical.getAutoCommit();
    if (d.isTag()) {
      if (autoCommit) {
        if (!write || !s.fences.anyFence() || SqlClassifier.runsOutsideTransactions(text)) {
          return OUTERMOST;
        }
        physical.setAutoCommit(false);
        try {
          s.dialect.setPair(physical, d.lock(), d.token(), d.signature(), d.grant(), true, idleBound(s));
        } catch (SQLException | RuntimeException e) {
          // The statement must not run in a transaction nobody commits: autocommit back, then as any failure.
          try {
            physical.rollback();
          } finally {
            physical.setAutoCommit(true);
          }
          throw e;
        }
        s.carry(d);
        return WRAPPED;
      }
      if (!s.carries(d)) {
        s.dialect.setPair(physical, d.lock(), d.token(), d.signature(), d.grant(), true, idleBound(s));
        s.carry(d);
      }
    } else if (!autoCommit && s.carriedLock != null) {
      s.dialect.clearPair(physical, true);
      s.carryNothing();
    }
    return OUTERMOST;
  }

  private long idleBound(SessionState s) {
    return s.fences.anyFence() ? idleTimeoutMillis : -1;
  }

  /** COMMIT / END / ROLLBACK as statement text: decided like Connection.commit() and rollback(). */
  private int control(Statement statement, String sql) throws SQLException {
    boolean commit = SqlClassifier.isCommit(sql);
    boolean rollback = !commit && SqlClassifier.isRollback(sql);
    boolean switches = !commit && !rollback && SqlClassifier.switchesSchema(sql);
    if (!commit && !rollback && !switches) {
      return OUTERMOST;
    }
    SessionState s = sessions.get(physical(statement.getConnection()));
    if (s == null) {
      return OUTERMOST;
    }
    if (switches) {
      s.schemaStale = true;
      return OUTERMOST;
    }
    if (!commit) {
      s.endTransaction();
      s.carriedToken = UNKNOWN_TOKEN;
      s.schemaStale = true; // a SET search_path made in the transaction is undone with it (PostgreSQL)
      return OUTERMOST;
    }
    checkCommit(statement.getConnection(), s);
    return COMMITTING;
  }

  /**
   * Blocks the commit of a transaction that wrote where no fence judges when a write would be blocked now (the
   * lease's deadline passed): rolls it back and throws FN003. The guard is held by the caller.
   */
  private void checkCommit(Connection connection, SessionState s) throws SQLException {
    if (!s.anyUnjudged()) {
      return;
    }
    Decision d = commitBlock(s);
    if (d == null) {
      return;
    }
    try {
      connection.rollback();
    } catch (SQLException | RuntimeException e) {
      LOG.debug("rollback of a blocked commit failed: " + AgentLog.describe(e));
    }
    s.endTransaction();
    s.carriedToken = UNKNOWN_TOKEN;
    ReentryGuard.exit();
    throw new SQLException("Fencing Agent blocked the commit of a transaction that wrote where no fence judges"
        + " (rolled back): lock '" + d.lock() + "', token " + (d.token() > 0 ? Long.toString(d.token()) : "none")
        + ": " + (d.reason() == null ? "blocked" : d.reason().description()), BLOCKED_SQLSTATE);
  }

  /**
   * Why the open transaction's unjudged writes must not be committed now, or null: those made outside every scope are
   * judged by the thread's gate now; those made in a lock scope by that scope's gate, and a write that was tagged only
   * while the grant it was tagged under is still held (a later grant must not vouch for it).
   */
  private static Decision commitBlock(SessionState s) {
    if (s.unjudged) {
      Decision d = Fencing.checkNow(Channel.JDBC, false);
      if (d.isBlock()) {
        return d;
      }
    }
    for (int i = 0; i < s.scopedCount; i++) {
      Decision tagged = s.scopedDecisions[i];
      LockScope scope = s.scopedUnjudged[i];
      Decision d = tagged.isTag() ? scope.gate().recheck(Channel.JDBC, false, tagged, 1)
          : scope.gate().checkNow(Channel.JDBC, false);
      if (d != null && d.isBlock()) {
        return d;
      }
    }
    return null;
  }

  @Override
  public int beforeCommit(Object connection) throws Exception {
    if (ReentryGuard.isAgentThread()) {
      return NOT_ENTERED;
    }
    if (!ReentryGuard.enter()) {
      return NESTED; // a pool's proxy calling the driver, or the hook's own commit of a transaction it opened
    }
    try {
      SessionState s = sessions.get(physical((Connection) connection));
      if (s != null) {
        checkCommit((Connection) connection, s);
      }
      return OUTERMOST;
    } catch (SQLException e) {
      if (BLOCKED_SQLSTATE.equals(e.getSQLState())) {
        throw e; // the guard was left by checkCommit
      }
      return OUTERMOST;
    } catch (Throwable t) {
      return OUTERMOST; // the commit runs as the application asked; the hook must not fail it
    }
  }

  @Override
  public void afterCommit(Object connection, int entered) {
    if (entered == NOT_ENTERED) {
      return;
    }
    ReentryGuard.exit();
    if (entered == OUTERMOST) {
      endTransactionOf(connection);
    }
  }

  /**
   * setAutoCommit(false) on a connection in autocommit mode: a transaction opens on this thread. Autocommit writes
   * before it were each committed by themselves; the transaction carries the thread's lock scope, if any, and joins
   * one the thread enters before it ends.
   */
  @Override
  public void transactionStarting(Object connection) {
    if (ReentryGuard.isAgentThread()) {
      return;
    }
    try {
      if (!ReentryGuard.enter()) {
        return; // nested in a hooked call (the hook's own transaction for an autocommit write behind a pooler)
      }
      Connection physical = physical((Connection) connection);
      if (!physical.getAutoCommit()) {
        return; // already in a transaction: setAutoCommit(false) changes nothing
      }
      SessionState s = session(physical);
      s.endTransaction();
      if (!s.exempt) {
        s.openedBy = Thread.currentThread();
        s.txScope = TokenContext.scope();
        openedOnThread.set(s);
      }
    } catch (Throwable ignored) {
      // a closed connection, a driver failing oddly: the transaction carries no scope, as without the hook
    } finally {
      ReentryGuard.exit();
    }
  }

  @Override
  public void scopeEntered(LockScope scope) {
    SessionState s = openedOnThread.get();
    if (s != null && s.txScope == null && s.openedBy == Thread.currentThread()) {
      s.txScope = scope; // a transaction opened around the section (a @Transactional proxy): it carries the scope
    }
  }

  private void endTransactionOf(Object connection) {
    try {
      SessionState s = sessions.get(physical((Connection) connection));
      if (s != null) {
        s.endTransaction();
      }
    } catch (Throwable ignored) {
      // nothing to forget
    }
  }

  /**
   * The hook could not do its part (a driver throwing what JDBC does not allow, a bug): counted and logged (rate-limited) by
   * the policy, and fail-mode decides: the call is blocked with the usual FN003 SQLException, or runs untagged.
   */
  private int failed(boolean write, Throwable error) throws SQLException {
    Decision d = Fencing.hookFailed(Channel.JDBC, write, error);
    if (d.isBlock()) {
      ReentryGuard.exit();
      throw new SQLException(d.blockMessage(Channel.JDBC), BLOCKED_SQLSTATE, error);
    }
    return OUTERMOST;
  }

  @Override
  public void afterExecute(Object statement, int entered, Throwable error) throws Exception {
    if (entered == NOT_ENTERED) {
      return;
    }
    SQLException commitFailure = null;
    try {
      if (entered == WRAPPED) {
        commitFailure = finishWrapped(connectionOf(statement, kind(statement)), error);
      } else if (entered == COMMITTING) {
        endTransactionOf(((Statement) statement).getConnection());
      }
    } catch (Throwable ignored) {
      // a closed statement: its connection's state is the driver's to report
    } finally {
      ReentryGuard.exit();
    }
    if (entered != NESTED && error instanceof SQLException) {
      countRejection((SQLException) error);
      try {
        // A failed statement may abort the transaction and, with it, the session pair set inside it.
        SessionState s = sessions.get(physical(connectionOf(statement, kind(statement))));
        if (s != null) {
          s.carriedToken = UNKNOWN_TOKEN;
        }
      } catch (Throwable ignored) {
        // closed statement, or a driver failing oddly: nothing to forget, and the application's call is over
      }
    }
    if (commitFailure != null && error == null) {
      throw commitFailure;
    }
  }

  /**
   * Ends the transaction the hook opened for an autocommit write: commits it when the statement returned, rolls it
   * back when it threw, and gives the connection its autocommit back. Returns the commit's failure: the write did
   * not happen, and the application, whose autocommit statement returned, must hear it.
   */
  private SQLException finishWrapped(Connection connection, Throwable error) throws SQLException {
    Connection physical = physical(connection);
    SessionState s = sessions.get(physical);
    SQLException failure = null;
    try {
      if (error == null) {
        physical.commit();
      } else {
        physical.rollback();
      }
    } catch (SQLException e) {
      failure = e;
      try {
        physical.rollback();
      } catch (SQLException ignored) {
        // the connection is broken; setAutoCommit below reports nothing more useful
      }
    } finally {
      if (s != null) {
        s.endTransaction();
      }
      physical.setAutoCommit(true);
    }
    return failure;
  }

  /** A statement, or else a CopyManager (the only other thing the hook is handed). */
  private static int kind(Object statementOrCopy) {
    return statementOrCopy instanceof Statement ? SQL : COPY;
  }

  @Override
  public void schemaChanged(Object connection, String name) {
    try {
      SessionState s = connection instanceof Connection ? sessions.get(physical((Connection) connection)) : null;
      if (s != null && (name == null || !name.equals(s.schema))) {
        s.schemaStale = true;
      }
    } catch (SQLException | RuntimeException ignored) {
      // a connection the hook cannot unwrap: its session, if any, keeps the schema it read
    }
  }

  @Override
  public void rolledBack(Object connection, boolean wholeTransaction) {
    try {
      SessionState s = sessions.get(physical((Connection) connection));
      if (s != null) {
        if (wholeTransaction) {
          s.endTransaction();
        }
        s.carriedToken = UNKNOWN_TOKEN;
        s.schemaStale = true; // a SET search_path made in the transaction is undone with it (PostgreSQL)
      }
    } catch (SQLException | RuntimeException ignored) {
      // nothing to forget
    }
  }

  private void countRejection(SQLException e) {
    for (SQLException x = e; x != null; x = x.getNextException()) {
      if (STALE_SQLSTATE.equals(x.getSQLState())) {
        rejections.record(Channel.JDBC, RejectionCounters.Reason.STALE_TOKEN);
        return;
      }
      if (MISSING_SQLSTATE.equals(x.getSQLState())) {
        rejections.record(Channel.JDBC, RejectionCounters.Reason.MISSING_TOKEN);
        return;
      }
    }
  }

  /** The driver's own connection behind any pool proxies, so the session pair is cached per database session. */
  static Connection physical(Connection c) throws SQLException {
    Connection current = c;
    for (int i = 0; i < 4; i++) {
      Connection inner = current.isWrapperFor(Connection.class) ? current.unwrap(Connection.class) : current;
      if (inner == null || inner == current) {
        return current;
      }
      current = inner;
    }
    return current;
  }

  private SessionState session(Connection physical) throws SQLException {
    SessionState s = sessions.get(physical);
    if (s == null) {
      String url = physical.getMetaData().getURL();
      SessionDialect dialect = SessionDialect.of(url);
      if (exempt(url)) {
        // No catalog query, no session setting: the agent leaves this database alone.
        s = new SessionState(dialect, DatabaseFences.NONE, false, null, true);
        sessions.put(physical, s);
        return s;
      }
      DatabaseFences fences = fences(url, physical, dialect);
      boolean perTransaction = dialect == SessionDialect.POSTGRESQL && pooled(url, physical);
      String schema = fences.tableCount() > 0 ? currentSchema(physical, dialect) : null;
      if (fences.anyFence() && idleTimeoutMillis > 0) {
        try {
          dialect.boundIdleTransactions(physical, idleTimeoutMillis);
        } catch (SQLException e) {
          LOG.debug("cannot bound idle transactions on " + url + ": " + AgentLog.describe(e));
        }
      }
      s = new SessionState(dialect, fences, perTransaction, schema);
      sessions.put(physical, s);
    }
    return s;
  }

  /** Whether the URL starts with one of fencing.exempt.jdbc's prefixes. */
  boolean exempt(String url) {
    if (url == null) {
      return false;
    }
    for (String prefix : exemptUrlPrefixes) {
      if (url.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /** Configured as fenced as a whole (fencing.fenced.jdbc), or read once per URL from the database's catalogs. */
  private DatabaseFences fences(String url, Connection physical, SessionDialect dialect) {
    for (String prefix : fencedUrlPrefixes) {
      if (url != null && url.startsWith(prefix)) {
        return DatabaseFences.declared(dialect);
      }
    }
    if (url == null || dialect == SessionDialect.UNKNOWN) {
      return DatabaseFences.NONE;
    }
    DatabaseFences known = fencesByUrl.get(url);
    if (known != null) {
      return known;
    }
    DatabaseFences detected = DatabaseFences.detect(physical, dialect, url);
    if (fencesByUrl.size() < MAX_REMEMBERED_URLS) {
      fencesByUrl.put(url, detected); // bounded: an application making up URLs (per-tenant, per-test) costs one query per new session, not memory
    }
    LOG.info("JDBC destination " + url + ": fenced tables: " + detected.describe());
    return detected;
  }

  /**
   * fencing.jdbc.pooler: transaction or session as configured. auto: per connection unless the connection is proven
   * direct, once per URL: the server process that runs its statements ({@code pg_backend_pid()}) is the one the driver
   * was told of when it connected (the BackendKeyData, pgjdbc's {@code getBackendPID()}). A pooler hands its clients
   * a key of its own (PgBouncer, over TCP or its Unix socket, on whatever port), so its clients get the
   * per-transaction pair; so does a connection that cannot be proven direct (the probe failed, a driver without
   * {@code getBackendPID}): correct everywhere, only dearer.
   */
  private boolean pooled(String url, Connection physical) {
    if (pooler != AgentConfig.JdbcPooler.AUTO) {
      return pooler == AgentConfig.JdbcPooler.TRANSACTION;
    }
    Boolean known = pooledByUrl.get(url);
    if (known != null) {
      return known;
    }
    String why;
    boolean pooled = true;
    try (Statement st = physical.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      int told = driverBackendPid(physical);
      int runs = rs.next() ? rs.getInt(1) : -1;
      pooled = told != runs;
      why = "the driver was told of server process " + told + " when it connected, and process " + runs
          + " runs its statements";
    } catch (ReflectiveOperationException | SQLException | RuntimeException e) {
      why = "cannot compare the server process the driver was told of with the one that runs its statements ("
          + AgentLog.describe(e) + ")";
    }
    if (pooledByUrl.size() < MAX_REMEMBERED_URLS) {
      pooledByUrl.put(url, pooled);
    }
    if (pooled) {
      LOG.info("JDBC destination " + url + ": " + why + ": not proven direct (a pooler may sit between), so the"
          + " token is set per transaction (fencing.jdbc.pooler=session keeps it per connection)");
    }
    return pooled;
  }

  /** pgjdbc's {@code PGConnection.getBackendPID()} of {@code physical}: the process of its start-up BackendKeyData. */
  private static int driverBackendPid(Connection physical) throws ReflectiveOperationException {
    return (Integer) physical.getClass().getMethod("getBackendPID").invoke(physical);
  }

  private static String currentSchema(Connection physical, SessionDialect dialect) {
    String query = dialect.currentSchemaQuery();
    if (query == null) {
      return null;
    }
    try (Statement st = physical.createStatement(); ResultSet rs = st.executeQuery(query)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      return null; // unqualified names then match no fenced table: their writes count as unjudged
    }
  }
}
