package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.JdbcCalls;
import dev.fencing.agent.bootstrap.JdbcHook;
import net.bytebuddy.asm.Advice;

/** PreparedStatement.execute*(): classified when prepared. Inlined into driver and pool classes: bootstrap classes only. */
public final class PreparedStatementAdvice {
  private PreparedStatementAdvice() {}

  @Advice.OnMethodEnter
  public static int enter(@Advice.This Object statement) throws Exception {
    return JdbcCalls.beforeExecute(statement, null, JdbcHook.PREPARED);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class)
  public static void exit(@Advice.This Object statement, @Advice.Enter int entered, @Advice.Thrown Throwable error)
      throws Exception {
    JdbcCalls.afterExecute(statement, entered, error);
  }
}
