package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.JdbcCalls;
import dev.fencing.agent.bootstrap.JdbcHook;
import net.bytebuddy.asm.Advice;

/** CopyManager.copyIn(String sql, ...): a write, decided like a statement. Inlined: bootstrap classes only. */
public final class CopyInAdvice {
  private CopyInAdvice() {}

  @Advice.OnMethodEnter
  public static int enter(@Advice.This Object manager, @Advice.Argument(0) String sql) throws Exception {
    return JdbcCalls.beforeExecute(manager, sql, JdbcHook.COPY);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class)
  public static void exit(@Advice.This Object manager, @Advice.Enter int entered, @Advice.Thrown Throwable error)
      throws Exception {
    JdbcCalls.afterExecute(manager, entered, error);
  }
}
