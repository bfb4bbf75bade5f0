package dev.fencing.agent.instrumentation.executors;

import dev.fencing.agent.bootstrap.TokenContext;
import net.bytebuddy.asm.Advice;

/** Replaces a periodic task scheduled inside a lock scope with one whose every run is in that scope. */
public final class WrapPeriodicAdvice {
  private WrapPeriodicAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(value = 0, readOnly = false) Runnable task) {
    task = TokenContext.wrapPeriodic(task);
  }
}
