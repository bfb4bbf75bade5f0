package dev.fencing.agent.instrumentation.executors;

import dev.fencing.agent.bootstrap.TokenContext;
import java.util.function.BiFunction;
import net.bytebuddy.asm.Advice;

/**
 * Replaces a CompletableFuture stage's BiFunction with one that runs under the registering thread's inbound token or
 * lock scope, wherever the future completes; unchanged when there is none.
 */
public final class WrapBiFunctionAdvice {
  private WrapBiFunctionAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(value = 0, readOnly = false) BiFunction<?, ?, ?> fn) {
    fn = TokenContext.wrap(fn);
  }
}
