package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Fencing;
import net.bytebuddy.asm.Advice;

/** Connection.rollback: a session setting made inside the transaction may be undone with it. */
public final class RollbackAdvice {
  private RollbackAdvice() {}

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.This Object connection, @Advice.Origin("#d") String descriptor) {
    // "()V": rollback() ends the transaction; rollback(Savepoint) keeps it (a constant string, no allocation).
    Fencing.jdbc().rolledBack(connection, descriptor.length() == 3);
  }
}
