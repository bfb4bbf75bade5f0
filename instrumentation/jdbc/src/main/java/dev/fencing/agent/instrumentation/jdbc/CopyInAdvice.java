package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.JdbcHook;
import java.sql.SQLException;
import net.bytebuddy.asm.Advice;

/** CopyManager.copyIn(String sql, ...): a write, decided like a statement. Inlined: bootstrap classes only. */
public final class CopyInAdvice {
  private CopyInAdvice() {}

  @Advice.OnMethodEnter
  public static int enter(@Advice.This Object manager, @Advice.Argument(0) String sql) throws Exception {
    try {
      return Fencing.jdbc().beforeExecute(manager, sql, JdbcHook.COPY);
    } catch (SQLException blocked) {
      throw blocked; // the hook's deliberate answer (FN003): the call does not reach the database
    } catch (Throwable agentError) {
      try {
        Fencing.hookFailed(Channel.JDBC, false, agentError); // counted and logged once per interval
      } catch (Throwable unreachable) {
        // the agent's classes are out of this loader's reach: nothing to count with
      }
      return 0; // not entered: the call runs as if the agent were absent
    }
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class)
  public static void exit(@Advice.This Object manager, @Advice.Enter int entered, @Advice.Thrown Throwable error)
      throws Exception {
    try {
      Fencing.jdbc().afterExecute(manager, entered, error);
    } catch (SQLException commitFailed) {
      throw commitFailed; // the hook's own transaction did not commit: the statement's work did not happen
    } catch (Throwable agentError) {
      try {
        Fencing.hookFailed(Channel.JDBC, false, agentError); // counted and logged once per interval
      } catch (Throwable unreachable) {
        // the agent's classes are out of this loader's reach: nothing to count with
      }
    }
  }
}
