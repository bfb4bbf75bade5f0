package dev.fencing.agent.instrumentation.jetcdlock;

import dev.fencing.agent.bootstrap.JetcdLocks;
import net.bytebuddy.asm.Advice;

/** {@code Election.resign(leaderKey)}: the leadership of that key ends before the key is deleted. */
public final class ResignAdvice {
  private ResignAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(0) Object leaderKey) {
    JetcdLocks.resigning(leaderKey);
  }
}
