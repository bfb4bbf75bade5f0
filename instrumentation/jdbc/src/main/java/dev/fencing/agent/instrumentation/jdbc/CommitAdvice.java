package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.JdbcCalls;
import net.bytebuddy.asm.Advice;

/**
 * Connection.commit(): a commit makes the transaction's writes visible, so after the lease's deadline the commit of a
 * transaction that wrote where no fence judges is blocked (rolled back). Inlined: bootstrap classes only.
 */
public final class CommitAdvice {
  private CommitAdvice() {}

  @Advice.OnMethodEnter
  public static int enter(@Advice.This Object connection) throws Exception {
    return JdbcCalls.beforeCommit(connection);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.This Object connection, @Advice.Enter int entered) {
    Fencing.jdbc().afterCommit(connection, entered);
  }
}
