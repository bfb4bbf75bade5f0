package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.JdbcHook;
import dev.fencing.agent.bootstrap.ReentryGuard;
import dev.fencing.agent.instrumentation.WeakIdentityCache;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.policy.RejectionCounters;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The JDBC side of the policy. Per statement: classify (cached per prepared statement), ask the policy, block with a
 * SQLException or make sure the physical connection's session carries the current (lock, token) before a write.
 * The pair is set only when the connection does not carry it yet (no extra round trip in the steady state), and
 * forgotten on rollback, since a rollback may undo it.
 */
final class JdbcFencing implements JdbcHook {
  /** No token equals it: the next tagged write sets the pair again, the next untagged one clears it. */
  private static final long UNKNOWN_TOKEN = -1;

  /** SQLSTATE of a write the agent blocked before it reached the database. */
  static final String BLOCKED_SQLSTATE = "FN003";
  static final String STALE_SQLSTATE = "FN001";
  static final String MISSING_SQLSTATE = "FN002";

  /** Fence detection results kept per JDBC URL, at most. */
  static final int MAX_REMEMBERED_URLS = 256;

  private static final AgentLog LOG = AgentLog.get(JdbcFencing.class);

  /** {@link #beforeExecute} results: not entered (agent thread), nested in another hooked call, outermost. */
  private static final int NOT_ENTERED = 0;
  private static final int NESTED = 1;
  private static final int OUTERMOST = 2;

  /** What the agent knows about one physical connection. */
  private static final class SessionState {
    final SessionDialect dialect;
    final boolean fenced;
    /** The lock last set on the session; null while the session carries no pair. */
    volatile String carriedLock;
    /** The token last set; {@link #UNKNOWN_TOKEN} after a failure or rollback may have undone it. */
    volatile long carriedToken;
    /** The signature last set (one instance per grant, so compared by reference). */
    volatile String carriedSignature;

    SessionState(SessionDialect dialect, boolean fenced) {
      this.dialect = dialect;
      this.fenced = fenced;
    }
  }

  private final WeakIdentityCache<Object, Boolean> preparedWrites = new WeakIdentityCache<>();
  private final WeakIdentityCache<Object, SessionState> sessions = new WeakIdentityCache<>();
  private final ConcurrentHashMap<String, Boolean> fencedByUrl = new ConcurrentHashMap<>();
  private final List<String> fencedUrlPrefixes;
  private final RejectionCounters rejections;

  JdbcFencing(List<String> fencedUrlPrefixes, RejectionCounters rejections) {
    this.fencedUrlPrefixes = fencedUrlPrefixes;
    this.rejections = rejections;
  }

  @Override
  public void prepared(Object statement, String sql) {
    if (statement != null && preparedWrites.get(statement) == null) {
      preparedWrites.put(statement, SqlClassifier.classify(sql) == SqlClassifier.Kind.WRITE);
    }
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
      if (kind == SQL) {
        SqlClassifier.Kind k = SqlClassifier.classify(sql);
        if (k == SqlClassifier.Kind.CONTROL) {
          return OUTERMOST;
        }
        write = k == SqlClassifier.Kind.WRITE;
      } else if (kind == PREPARED) {
        Boolean w = preparedWrites.get(statement);
        write = w == null || w;
      } else {
        write = true; // batches exist to write
      }
      Connection physical = physical(((Statement) statement).getConnection());
      SessionState session = session(physical);
      Decision d = Fencing.decide(Channel.JDBC, write, session.fenced);
      if (d.isBlock()) {
        ReentryGuard.exit();
        throw new SQLException(d.blockMessage(Channel.JDBC), BLOCKED_SQLSTATE);
      }
      if (write && d.isTag() && (session.carriedToken != d.token() || !d.lock().equals(session.carriedLock)
          || session.carriedSignature != d.signature())) {
        session.dialect.setPair(physical, d.lock(), d.token(), d.signature());
        session.carriedLock = d.lock();
        session.carriedToken = d.token();
        session.carriedSignature = d.signature();
      } else if (write && !d.isTag() && session.carriedLock != null) {
        // An untagged write (no lease of our own, fail-mode open) after a tagged one on this session: the session
        // must not still vouch for the earlier token (an inbound request's, or a lost lease's).
        session.dialect.clearPair(physical);
        session.carriedLock = null;
        session.carriedToken = 0;
        session.carriedSignature = null;
      }
      return OUTERMOST;
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
  public void afterExecute(Object statement, int entered, Throwable error) {
    if (entered == NOT_ENTERED) {
      return;
    }
    ReentryGuard.exit();
    if (entered == OUTERMOST && error instanceof SQLException) {
      countRejection((SQLException) error);
      try {
        // A failed statement may abort the transaction and, with it, the session pair set inside it.
        SessionState s = sessions.get(physical(((Statement) statement).getConnection()));
        if (s != null) {
          s.carriedToken = UNKNOWN_TOKEN;
        }
      } catch (Throwable ignored) {
        // closed statement, or a driver failing oddly: nothing to forget, and the application's call is over
      }
    }
  }

  @Override
  public void rolledBack(Object connection) {
    try {
      SessionState s = sessions.get(physical((Connection) connection));
      if (s != null) {
        s.carriedToken = UNKNOWN_TOKEN;
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
      s = new SessionState(dialect, fenced(url, physical, dialect));
      sessions.put(physical, s);
    }
    return s;
  }

  /** Configured (fencing.fenced.jdbc), or detected once per URL: the database has the fence table. */
  private boolean fenced(String url, Connection physical, SessionDialect dialect) {
    for (String prefix : fencedUrlPrefixes) {
      if (url != null && url.startsWith(prefix)) {
        return true;
      }
    }
    if (url == null || dialect == SessionDialect.UNKNOWN) {
      return false;
    }
    Boolean known = fencedByUrl.get(url);
    if (known != null) {
      return known;
    }
    boolean detected = false;
    try (Statement st = physical.createStatement();
        ResultSet rs = st.executeQuery(
            "SELECT 1 FROM information_schema.tables WHERE lower(table_name) = 'fencing_fence'")) {
      detected = rs.next();
    } catch (SQLException e) {
      LOG.debug("fence detection failed for " + url + ": " + AgentLog.describe(e));
    }
    if (fencedByUrl.size() < MAX_REMEMBERED_URLS) {
      fencedByUrl.put(url, detected); // bounded: an application making up URLs (per-tenant, per-test) costs one query per new session, not memory
    }
    LOG.info("JDBC destination " + url + " is " + (detected ? "fenced (fence table found)" : "not fenced"));
    return detected;
  }
}
