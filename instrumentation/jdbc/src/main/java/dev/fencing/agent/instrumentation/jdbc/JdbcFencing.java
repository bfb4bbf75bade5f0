package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.instrumentation.api.JdbcPooler;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.JdbcHook;
import dev.fencing.agent.bootstrap.LockScope;
import dev.fencing.agent.bootstrap.ReentryGuard;
import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.instrumentation.api.WeakIdentityCache;
import dev.fencing.agent.instrumentation.api.DestinationInventory;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.protocol.SqlStates;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

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
 * Each connection's {@link JdbcSession} comes from {@link JdbcSessions}; {@link SessionTagger} makes it carry the
 * pair, {@link CommitJudge} judges its commits.
 */
final class JdbcFencing implements JdbcHook {
  /** SQLSTATE of a write the agent blocked before it reached the database. */
  static final String BLOCKED_SQLSTATE = SqlStates.BLOCKED_BY_AGENT;
  static final String STALE_SQLSTATE = SqlStates.STALE_TOKEN;
  static final String MISSING_SQLSTATE = SqlStates.MISSING_TOKEN;

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
    /** Its inventory entry, found once per database it runs on (the last one). */
    volatile DestinationInventory.Destination destination;
    volatile DestinationInventory.Database destinationOf;
    /**
     * The session of the physical connection it last ran on, so that running it again on that connection (as a
     * statement always does) finds its session by one comparison instead of a lookup.
     */
    volatile JdbcSession session;

    Prepared(boolean write, String sql, long target) {
      this.write = write;
      this.sql = sql;
      this.target = target;
      this.switchesSchema = !write && SqlClassifier.switchesSchema(sql);
    }
  }

  /**
   * What the hook keeps on a thread between its calls ({@link ReentryGuard.HookThread#remembered}): the entry of the
   * statement the thread prepared or ran last (a statement usually runs right after it was prepared, or again and
   * again), and the session of the connection its last plain statement ran on. Each is checked before use, so a
   * thread that moved on finds them by the identity lookup, as before.
   */
  private static final class OnThread {
    WeakIdentityCache.Entry<Prepared> prepared;
    JdbcSession session;
  }

  private final WeakIdentityCache<Object, Prepared> preparedStatements = new WeakIdentityCache<>();
  /**
   * The session whose transaction the thread opened last, so that a lock scope the thread enters while it is open
   * joins it ({@link #scopeEntered}). Checked against {@link JdbcSession#openedBy} before use, so a stale entry
   * (the transaction ended) changes nothing.
   */
  private final ThreadLocal<JdbcSession> openedOnThread = new ThreadLocal<>();
  private final JdbcSessions sessions;
  private final SessionTagger tagger;
  private final WeakIdentityCache<Object, Connection> copyManagers = new WeakIdentityCache<>();
  private final String[] writeFunctions;
  private final RejectionCounters rejections;
  private final SideEffectCounters sideEffects;
  private final DestinationInventory inventory;
  /** The lock label of writes to an exempt database (fencing.lock, or none). */
  private final String exemptLock;

  JdbcFencing(List<String> fencedUrlPrefixes, RejectionCounters rejections) {
    this(fencedUrlPrefixes, JdbcPooler.AUTO, List.of(), Duration.ZERO, rejections);
  }

  JdbcFencing(List<String> fencedUrlPrefixes, JdbcPooler pooler, List<String> writeFunctions,
      Duration idleInTransactionTimeout, RejectionCounters rejections) {
    this(fencedUrlPrefixes, pooler, writeFunctions, idleInTransactionTimeout, rejections, List.of(),
        new SideEffectCounters());
  }

  JdbcFencing(List<String> fencedUrlPrefixes, JdbcPooler pooler, List<String> writeFunctions,
      Duration idleInTransactionTimeout, RejectionCounters rejections, List<String> exemptUrlPrefixes,
      SideEffectCounters sideEffects) {
    this(fencedUrlPrefixes, pooler, writeFunctions, idleInTransactionTimeout, rejections, exemptUrlPrefixes,
        sideEffects, new DestinationInventory(), "none");
  }

  JdbcFencing(List<String> fencedUrlPrefixes, JdbcPooler pooler, List<String> writeFunctions,
      Duration idleInTransactionTimeout, RejectionCounters rejections, List<String> exemptUrlPrefixes,
      SideEffectCounters sideEffects, DestinationInventory inventory, String exemptLock) {
    this.sideEffects = sideEffects;
    this.inventory = inventory;
    this.exemptLock = exemptLock;
    this.writeFunctions = writeFunctions.toArray(new String[0]);
    // Milliseconds, or -1: leave the database's setting.
    long idleTimeoutMillis = idleInTransactionTimeout.isZero() ? -1 : idleInTransactionTimeout.toMillis();
    this.sessions = new JdbcSessions(fencedUrlPrefixes, pooler, idleTimeoutMillis, exemptUrlPrefixes);
    this.sessions.inventory = inventory;
    this.tagger = new SessionTagger(idleTimeoutMillis);
    this.rejections = rejections;
  }

  @Override
  public void prepared(Object statement, String sql) {
    if (statement == null) {
      return;
    }
    ReentryGuard.HookThread thread = ReentryGuard.thread();
    WeakIdentityCache.Entry<Prepared> e = preparedStatements.entry(statement, thread.probe());
    if (e == null) {
      boolean write = SqlClassifier.classify(sql, writeFunctions) == SqlClassifier.Kind.WRITE;
      // The target is found for every dialect's rule at once: TRUNCATE counts only where its fence fires, which is
      // checked against the session's dialect when the statement runs.
      e = preparedStatements.putEntry(statement, new Prepared(write, sql, write ? target(sql, true) : SqlTarget.NONE));
    }
    onThread(thread).prepared = e;
  }

  private OnThread onThread(ReentryGuard.HookThread thread) {
    Object kept = thread.remembered(this);
    if (kept != null) {
      return (OnThread) kept;
    }
    OnThread made = new OnThread(); // once per thread
    thread.remember(this, made);
    return made;
  }

  /** The statement's entry, found on the thread when it is the one it prepared or ran last, else looked up. */
  private Prepared prepared(Object statement, ReentryGuard.HookThread thread, OnThread on) {
    WeakIdentityCache.Entry<Prepared> e = on.prepared;
    Prepared p = e == null ? null : e.valueFor(statement);
    if (p == null) {
      e = preparedStatements.entry(statement, thread.probe());
      if (e != null) {
        on.prepared = e;
        p = e.valueFor(statement);
      }
    }
    return p;
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
    ReentryGuard.HookThread hookThread = ReentryGuard.enterThread(); // its probe serves this call's lookups
    if (!hookThread.outermost()) {
      // Nested: a pool's proxy calling the driver, a driver method calling another, or our own session statement.
      // The outermost call decides and counts.
      return NESTED;
    }
    boolean write = true; // until classified: a call the hook could not look at counts as a write
    try {
      OnThread on = onThread(hookThread);
      String text = sql;
      long target = SqlTarget.NONE;
      boolean targetFound = false;
      boolean switchesSchema = false;
      Prepared prepared = null;
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
        Prepared p = prepared(statement, hookThread, on);
        prepared = p;
        write = kind == BATCH || p == null || p.write;
        if (p != null) {
          text = p.sql;
          target = p.target;
          targetFound = true;
          switchesSchema = p.switchesSchema;
        }
      }
      Connection physical = physical(connectionOf(statement, kind));
      JdbcSession session = prepared != null ? prepared.session : on.session;
      if (session == null || !session.isOf(physical)) {
        session = sessions.of(physical, hookThread.probe());
        if (prepared != null) {
          prepared.session = session;
        } else {
          on.session = session; // a thread runs its next plain statement on the same connection
        }
      }
      if (switchesSchema) {
        session.schemaStale = true; // a prepared SET search_path / USE: read the schema again before the next write
      }
      if (session.exempt) {
        // fencing.exempt.jdbc: untagged, never blocked, its commits unjudged; decided once, when the session was met.
        if (write) {
          sideEffects.recordExempt(Channel.JDBC, false);
          DestinationInventory.Database db = session.database;
          session.wrote(inventory.recordExempt(db == null ? null : db.everyTable(), exemptLock));
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
          targetFound = true;
        } else if (target != SqlTarget.NONE && !session.dialect.truncateFenced()
            && SqlClassifier.startsWithWord(text, "TRUNCATE")) {
          target = SqlTarget.NONE;
        }
        if (session.schemaStale) {
          session.schemaStale = false; // before the read: a switch during it marks it stale again
          session.schema = JdbcSession.currentSchema(physical, session.dialect);
        }
        fenced = fences.judges(text, target, session.schema);
      }
      LockScope scope = decidingScope(physical, session);
      Decision d = scope == null ? Fencing.decide(Channel.JDBC, write, fenced)
          : scope.gate().decide(Channel.JDBC, write, fenced);
      if (write) {
        session.wrote(inventory.record(destination(session, prepared, text, target, targetFound), fenced, d));
      }
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
      return tagger.tag(physical, session, d, write, text) ? WRAPPED : OUTERMOST;
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
   * The inventory entry of a write on {@code s}: its target table (found with the same {@link SqlTarget} the fence
   * check uses; for a plain statement on a database without fences, found here), the database as a whole when it is
   * declared fenced, or the entry of writes with no single target. Allocation-free once the table was seen.
   */
  private DestinationInventory.Destination destination(JdbcSession s, Prepared p, String text, long target,
      boolean targetFound) {
    DestinationInventory.Database db = s.database;
    if (db == null) {
      return null;
    }
    if (s.fences.allFenced()) {
      return db.everyTable();
    }
    if (p != null && p.destinationOf == db) {
      return p.destination; // a prepared statement run again on the same database: its entry, found before
    }
    DestinationInventory.Destination known = p == null && !targetFound ? db.bySql(text) : null;
    if (known != null) {
      return known; // a plain statement's text met before: no scan for its target
    }
    long t = targetFound ? target : text == null ? SqlTarget.NONE : target(text, s.dialect.truncateFenced());
    DestinationInventory.Destination d;
    if (t == SqlTarget.NONE) {
      d = db.noSingleTable();
    } else {
      boolean h2 = s.dialect == SessionDialect.H2;
      boolean fold = h2 || s.dialect == SessionDialect.POSTGRESQL;
      d = db.table(text, SqlTarget.nameStart(t), SqlTarget.nameEnd(t), SqlTarget.schemaStart(t),
          SqlTarget.schemaEnd(t), fold && !SqlTarget.schemaQuoted(t), fold && !SqlTarget.nameQuoted(t), h2);
    }
    if (p != null) {
      p.destination = d;
      p.destinationOf = db; // after the entry: a reader that sees this database sees its entry
    } else if (!targetFound) {
      db.rememberSql(text, d);
    }
    return d;
  }

  /**
   * The lock scope that decides a statement on {@code s}: the thread's, which an open transaction of the session joins
   * if it carries none yet; else, outside every scope, the one the session's open transaction carries (a flush or a
   * statement made after the section returned, before the commit); null for neither. A transaction is known to be open
   * from the driver's autocommit flag, read only when a scope is involved.
   */
  private static LockScope decidingScope(Connection physical, JdbcSession s) throws SQLException {
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

  /** COMMIT / END / ROLLBACK as statement text: decided like Connection.commit() and rollback(). */
  private int control(Statement statement, String sql) throws SQLException {
    boolean commit = SqlClassifier.isCommit(sql);
    boolean rollback = !commit && SqlClassifier.isRollback(sql);
    boolean switches = !commit && !rollback && SqlClassifier.switchesSchema(sql);
    if (!commit && !rollback && !switches) {
      return OUTERMOST;
    }
    JdbcSession s = sessions.get(physical(statement.getConnection()));
    if (s == null) {
      return OUTERMOST;
    }
    if (switches) {
      s.schemaStale = true;
      return OUTERMOST;
    }
    if (!commit) {
      s.endTransaction();
      s.carriedToken = JdbcSession.UNKNOWN_TOKEN;
      s.schemaStale = true; // a SET search_path made in the transaction is undone with it (PostgreSQL)
      return OUTERMOST;
    }
    CommitJudge.check(statement.getConnection(), s);
    return COMMITTING;
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
      JdbcSession s = sessions.get(physical((Connection) connection));
      if (s != null) {
        CommitJudge.check((Connection) connection, s);
      }
      return OUTERMOST;
    } catch (SQLException e) {
      if (BLOCKED_SQLSTATE.equals(e.getSQLState())) {
        throw e; // the guard was left by CommitJudge.check
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
      JdbcSession s = sessions.of(physical);
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
    JdbcSession s = openedOnThread.get();
    if (s != null && s.txScope == null && s.openedBy == Thread.currentThread()) {
      s.txScope = scope; // a transaction opened around the section (a @Transactional proxy): it carries the scope
    }
  }

  private void endTransactionOf(Object connection) {
    try {
      JdbcSession s = sessions.get(physical((Connection) connection));
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
      boolean rejected = countRejection((SQLException) error);
      try {
        // A failed statement may abort the transaction and, with it, the session pair set inside it.
        JdbcSession s = sessions.get(physical(connectionOf(statement, kind(statement))));
        if (s != null) {
          s.carriedToken = JdbcSession.UNKNOWN_TOKEN;
          if (rejected && s.lastWrite != null) {
            s.lastWrite.rejected();
          }
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
    JdbcSession s = sessions.get(physical);
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
      JdbcSession s = connection instanceof Connection ? sessions.get(physical((Connection) connection)) : null;
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
      JdbcSession s = sessions.get(physical((Connection) connection));
      if (s != null) {
        if (wholeTransaction) {
          s.endTransaction();
        }
        s.carriedToken = JdbcSession.UNKNOWN_TOKEN;
        s.schemaStale = true; // a SET search_path made in the transaction is undone with it (PostgreSQL)
      }
    } catch (SQLException | RuntimeException ignored) {
      // nothing to forget
    }
  }

  private boolean countRejection(SQLException e) {
    for (SQLException x = e; x != null; x = x.getNextException()) {
      if (STALE_SQLSTATE.equals(x.getSQLState())) {
        rejections.record(Channel.JDBC, RejectionCounters.Reason.STALE_TOKEN);
        return true;
      }
      if (MISSING_SQLSTATE.equals(x.getSQLState())) {
        rejections.record(Channel.JDBC, RejectionCounters.Reason.MISSING_TOKEN);
        return true;
      }
    }
    return false;
  }

  /** The driver's own connection behind any pool proxies ({@link JdbcSessions#physical}). */
  static Connection physical(Connection c) throws SQLException {
    return JdbcSessions.physical(c);
  }
}
