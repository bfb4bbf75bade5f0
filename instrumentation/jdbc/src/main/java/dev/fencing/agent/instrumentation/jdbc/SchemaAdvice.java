package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Fencing;
import net.bytebuddy.asm.Advice;

/** Connection.setSchema / setCatalog: the session's current schema (or database) may have changed. */
public final class SchemaAdvice {
  private SchemaAdvice() {}

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.This Object connection, @Advice.Argument(0) String name) {
    Fencing.jdbc().schemaChanged(connection, name);
  }
}
