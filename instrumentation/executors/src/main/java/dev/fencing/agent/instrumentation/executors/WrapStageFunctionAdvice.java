package dev.fencing.agent.instrumentation.executors;

import dev.fencing.agent.bootstrap.TokenContext;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * Replaces the function of a two-stage CompletableFuture form ({@code thenCombine(other, fn)}, ...: the second
 * argument, a Function, Consumer, Runnable, BiFunction or BiConsumer) with one that runs under the registering thread's
 * inbound token or lock scope, wherever the futures complete; unchanged when there is none.
 */
public final class WrapStageFunctionAdvice {
  private WrapStageFunctionAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(
      @Advice.Argument(value = 1, readOnly = false, typing = Assigner.Typing.DYNAMIC) Object fn) {
    fn = TokenContext.wrapStageFunction(fn);
  }
}
