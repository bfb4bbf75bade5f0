package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Decision;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Makes a statement's session carry the pair its decision calls for, or none: per session on a direct connection,
 * set only when the session does not carry it yet; per transaction behind a transaction pooler.
 */
final class SessionTagger {
  /** Milliseconds, or -1: leave the database's setting. */
  private final long idleTimeoutMillis;

  SessionTagger(long idleTimeoutMillis) {
    this.idleTimeoutMillis = idleTimeoutMillis;
  }

  /**
   * Tags the session of a statement decided {@code d}; true when it opened a transaction for an autocommit write,
   * which the hook ends when the statement returns.
   */
  boolean tag(Connection physical, JdbcSession s, Decision d, boolean write, String text) throws SQLException {
    if (s.perTransaction) {
      return tagTransaction(physical, s, d, write, text);
    }
    tagSession(physical, s, d);
    return false;
  }

  /** Session scope: set the pair when the session does not carry it yet, clear it when the call must carry none. */
  private void tagSession(Connection physical, JdbcSession s, Decision d) throws SQLException {
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
  }

  /**
   * Transaction scope (behind a transaction pooler): the pair goes with the transaction, which the pooler runs on one
   * server session from its first statement to its end. An autocommit write gets a transaction of its own (the hook
   * commits it when the statement returns), except on a database with no fence (nothing there reads the pair) and for
   * a statement that cannot run in a transaction ({@code VACUUM}, {@code CREATE INDEX CONCURRENTLY}, ...), which go as
   * they are, without the pair; an autocommit read carries nothing, so a function it calls that writes a fenced table
   * fails with FN002 rather than borrow whatever another client left in the server session.
   */
  private boolean tagTransaction(Connection physical, JdbcSession s, Decision d, boolean write, String text)
      throws SQLException {
    boolean autoCommit = physical.getAutoCommit();
    if (d.isTag()) {
      if (autoCommit) {
        if (!write || !s.fences.anyFence() || SqlClassifier.runsOutsideTransactions(text)) {
          return false;
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
        return true;
      }
      if (!s.carries(d)) {
        s.dialect.setPair(physical, d.lock(), d.token(), d.signature(), d.grant(), true, idleBound(s));
        s.carry(d);
      }
    } else if (!autoCommit && s.carriedLock != null) {
      s.dialect.clearPair(physical, true);
      s.carryNothing();
    }
    return false;
  }

  private long idleBound(JdbcSession s) {
    return s.fences.anyFence() ? idleTimeoutMillis : -1;
  }
}
