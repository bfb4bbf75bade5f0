package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Fencing;
import net.bytebuddy.asm.Advice;

/** new CopyManager(connection): remember the manager's connection. Inlined: bootstrap classes only. */
public final class CopyManagerCreatedAdvice {
  private CopyManagerCreatedAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.This Object manager, @Advice.Argument(0) Object connection) {
    Fencing.jdbc().copyManagerCreated(manager, connection);
  }
}
