package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Fencing;
import java.sql.SQLException;
import net.bytebuddy.asm.Advice;

/**
 * Connection.setAutoCommit(boolean): true commits an open transaction (decided as a commit), false starts one.
 * Inlined: bootstrap classes only.
 */
public final class AutoCommitAdvice {
  private AutoCommitAdvice() {}

  @Advice.OnMethodEnter
  public static int enter(@Advice.This Object connection, @Advice.Argument(0) boolean autoCommit) throws Exception {
    try {
      if (autoCommit) {
        return Fencing.jdbc().beforeCommit(connection);
      }
      Fencing.jdbc().transactionStarting(connection);
    } catch (SQLException blocked) {
      throw blocked; // the hook's deliberate answer: the transaction was rolled back, not committed
    } catch (Throwable agentError) {
      try {
        Fencing.hookFailed(Channel.JDBC, false, agentError); // counted and logged once per interval
      } catch (Throwable unreachable) {
        // the agent's classes are out of this loader's reach: nothing to count with
      }
    }
    return 0;
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.This Object connection, @Advice.Argument(0) boolean autoCommit,
      @Advice.Enter int entered) {
    if (autoCommit) {
      Fencing.jdbc().afterCommit(connection, entered);
    }
  }
}
