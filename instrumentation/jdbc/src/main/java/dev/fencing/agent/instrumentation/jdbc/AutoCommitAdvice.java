package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.JdbcCalls;
import net.bytebuddy.asm.Advice;

/**
 * Connection.setAutoCommit(boolean): true commits an open transaction (decided as a commit), false starts one.
 * Inlined: bootstrap classes only.
 */
public final class AutoCommitAdvice {
  private AutoCommitAdvice() {}

  @Advice.OnMethodEnter
  public static int enter(@Advice.This Object connection, @Advice.Argument(0) boolean autoCommit) throws Exception {
    return JdbcCalls.beforeSetAutoCommit(connection, autoCommit);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.This Object connection, @Advice.Argument(0) boolean autoCommit,
      @Advice.Enter int entered) {
    if (autoCommit) {
      Fencing.jdbc().afterCommit(connection, entered);
    }
  }
}
