package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.LockScope;
import dev.fencing.agent.bootstrap.ReentryGuard;
import dev.fencing.agent.log.AgentLog;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * A commit is a side effect: the commit of a transaction that wrote where no fence judges is judged when it is
 * asked for (Connection.commit(), or COMMIT as statement text), and blocked (rolled back) when such a write would be
 * blocked now.
 */
final class CommitJudge {
  /** The JDBC hook's log: its lines keep the hook's name. */
  private static final AgentLog LOG = AgentLog.get(JdbcFencing.class);

  private CommitJudge() {
  }

  /**
   * Blocks the commit of a transaction that wrote where no fence judges when a write would be blocked now (the
   * lease's deadline passed): rolls it back and throws FN003. The guard is held by the caller, and left when it
   * throws.
   */
  static void check(Connection connection, JdbcSession s) throws SQLException {
    if (!s.anyUnjudged()) {
      return;
    }
    Decision d = block(s);
    if (d == null) {
      return;
    }
    s.commitBlocked();
    try {
      connection.rollback();
    } catch (SQLException | RuntimeException e) {
      LOG.debug("rollback of a blocked commit failed: " + AgentLog.describe(e));
    }
    s.endTransaction();
    s.carriedToken = JdbcSession.UNKNOWN_TOKEN;
    ReentryGuard.exit();
    throw new SQLException("Fencing Agent blocked the commit of a transaction that wrote where no fence judges"
        + " (rolled back): lock '" + d.lock() + "', token " + (d.token() > 0 ? Long.toString(d.token()) : "none")
        + ": " + (d.reason() == null ? "blocked" : d.reason().description()), JdbcFencing.BLOCKED_SQLSTATE);
  }

  /**
   * Why the open transaction's unjudged writes must not be committed now, or null: those made outside every scope are
   * judged by the thread's gate now; those made in a lock scope by that scope's gate, and a write that was tagged only
   * while the grant it was tagged under is still held (a later grant must not vouch for it).
   */
  private static Decision block(JdbcSession s) {
    if (s.unjudged) {
      Decision d = Fencing.checkNow(Channel.JDBC, false);
      if (d.isBlock()) {
        return d;
      }
    }
    for (int i = 0; i < s.scopedCount(); i++) {
      Decision tagged = s.decisionOfUnjudged(i);
      LockScope scope = s.scopeOfUnjudged(i);
      Decision d = tagged.isTag() ? scope.gate().recheck(Channel.JDBC, false, tagged, 1)
          : scope.gate().checkNow(Channel.JDBC, false);
      if (d != null && d.isBlock()) {
        return d;
      }
    }
    return null;
  }
}
