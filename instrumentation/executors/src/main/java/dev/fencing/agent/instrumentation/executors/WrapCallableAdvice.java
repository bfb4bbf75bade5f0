package dev.fencing.agent.instrumentation.executors;

import dev.fencing.agent.bootstrap.TokenContext;
import java.util.concurrent.Callable;
import net.bytebuddy.asm.Advice;

/** Replaces the callable with one that runs under the submitting thread's inbound token; unchanged when none. */
public final class WrapCallableAdvice {
  private WrapCallableAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(value = 0, readOnly = false) Callable<?> task) {
    task = TokenContext.wrap(task);
  }
}
