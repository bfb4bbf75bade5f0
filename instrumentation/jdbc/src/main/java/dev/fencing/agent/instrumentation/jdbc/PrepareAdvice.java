package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Fencing;
import net.bytebuddy.asm.Advice;

/** Connection.prepareStatement / prepareCall: classify the SQL once, for every later execution. */
public final class PrepareAdvice {
  private PrepareAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Argument(0) String sql, @Advice.Return Object statement) {
    Fencing.jdbc().prepared(statement, sql);
  }
}
