package dev.fencing.agent.instrumentation.jetcdlock;

import dev.fencing.agent.bootstrap.JetcdLocks;
import net.bytebuddy.asm.Advice;

/** {@code Lock.unlock(key)}: the hold of that key ends before the key is deleted. */
public final class UnlockAdvice {
  private UnlockAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(0) Object key) {
    JetcdLocks.unlocking(key);
  }
}
