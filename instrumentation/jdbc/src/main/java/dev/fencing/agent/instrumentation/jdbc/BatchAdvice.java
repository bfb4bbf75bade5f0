package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.JdbcCalls;
import dev.fencing.agent.bootstrap.JdbcHook;
import net.bytebuddy.asm.Advice;

/** executeBatch / executeLargeBatch: batches are writes. Inlined into driver and pool classes: bootstrap classes only. */
public final class BatchAdvice {
  private BatchAdvice() {}

  @Advice.OnMethodEnter
  public static int enter(@Advice.This Object statement) throws Exception {
    return JdbcCalls.beforeExecute(statement, null, JdbcHook.BATCH);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class)
  public static void exit(@Advice.This Object statement, @Advice.Enter int entered, @Advice.Thrown Throwable error)
      throws Exception {
    JdbcCalls.afterExecute(statement, entered, error);
  }
}
