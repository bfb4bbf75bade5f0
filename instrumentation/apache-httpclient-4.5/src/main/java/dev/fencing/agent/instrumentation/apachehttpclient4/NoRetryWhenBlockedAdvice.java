package dev.fencing.agent.instrumentation.apachehttpclient4;

import dev.fencing.agent.bootstrap.FencingBlockedException;
import java.io.IOException;
import net.bytebuddy.asm.Advice;

/** retryRequest(IOException, executionCount, context): never retry an attempt the agent blocked. */
public final class NoRetryWhenBlockedAdvice {
  private NoRetryWhenBlockedAdvice() {}

  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
  public static boolean enter(@Advice.Argument(0) IOException exception) {
    return exception instanceof FencingBlockedException;
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Enter boolean blocked, @Advice.Return(readOnly = false) boolean retry) {
    if (blocked) {
      retry = false;
    }
  }
}
