package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Fencing;
import java.sql.SQLException;
import net.bytebuddy.asm.Advice;

/**
 * Connection.commit(): a commit makes the transaction's writes visible, so after the lease's deadline the commit of a
 * transaction that wrote where no fence judges is blocked (rolled back). Inlined: bootstrap classes only.
 */
public final class CommitAdvice {
  private CommitAdvice() {}

  @Advice.OnMethodEnter
  public static int enter(@Advice.This Object connection) throws Exception {
    try {
      return Fencing.jdbc().beforeCommit(connection);
    } catch (SQLException blocked) {
      throw blocked; // the hook's deliberate answer: the transaction was rolled back, not committed
    } catch (Throwable agentError) {
      try {
        Fencing.hookFailed(Channel.JDBC, false, agentError); // counted and logged once per interval
      } catch (Throwable unreachable) {
        // the agent's classes are out of this loader's reach: nothing to count with
      }
      return 0;
    }
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.This Object connection, @Advice.Enter int entered) {
    Fencing.jdbc().afterCommit(connection, entered);
  }
}
