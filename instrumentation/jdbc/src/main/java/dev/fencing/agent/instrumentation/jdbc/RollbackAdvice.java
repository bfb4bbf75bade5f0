package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Fencing;
import net.bytebuddy.asm.Advice;

/** Connection.rollback: a session setting made inside the transaction may be undone with it. */
public final class RollbackAdvice {
  private RollbackAdvice() {}

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.This Object connection) {
    Fencing.jdbc().rolledBack(connection);
  }
}
