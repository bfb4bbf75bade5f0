package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.JdbcCalls;
import dev.fencing.agent.bootstrap.JdbcHook;
import net.bytebuddy.asm.Advice;

/** Statement.execute*(String sql, ...): the SQL text is at hand. Inlined into driver and pool classes: bootstrap classes only. */
public final class StatementSqlAdvice {
  private StatementSqlAdvice() {}

  @Advice.OnMethodEnter
  public static int enter(@Advice.This Object statement, @Advice.Argument(0) String sql) throws Exception {
    return JdbcCalls.beforeExecute(statement, sql, JdbcHook.SQL);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class)
  public static void exit(@Advice.This Object statement, @Advice.Enter int entered, @Advice.Thrown Throwable error)
      throws Exception {
    JdbcCalls.afterExecute(statement, entered, error);
  }
}
