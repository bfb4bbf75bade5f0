package dev.fencing.agent.instrumentation.executors;

import dev.fencing.agent.bootstrap.TokenContext;
import net.bytebuddy.asm.Advice;

/** Replaces the task with one that runs under the submitting thread's inbound token; unchanged when there is none. */
public final class WrapRunnableAdvice {
  private WrapRunnableAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(value = 0, readOnly = false) Runnable task) {
    task = TokenContext.wrap(task);
  }
}
