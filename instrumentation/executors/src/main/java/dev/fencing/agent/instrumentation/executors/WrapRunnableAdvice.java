package dev.fencing.agent.instrumentation.executors;

import dev.fencing.agent.bootstrap.TokenContext;
import net.bytebuddy.asm.Advice;

/**
 * Replaces the task with one that runs under the submitting thread's inbound token; unchanged when there is none, and
 * when the executor's queue orders tasks by their type (see {@link TokenContext#wrap(Runnable, Object)}).
 */
public final class WrapRunnableAdvice {
  private WrapRunnableAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.This Object executor, @Advice.Argument(value = 0, readOnly = false) Runnable task) {
    task = TokenContext.wrap(task, executor);
  }
}
