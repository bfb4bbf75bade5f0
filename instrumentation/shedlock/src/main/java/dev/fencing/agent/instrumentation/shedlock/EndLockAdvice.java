package dev.fencing.agent.instrumentation.shedlock;

import dev.fencing.agent.bootstrap.ShedLocks;
import net.bytebuddy.asm.Advice;

/** {@code LockAssert.endLock()}: the task ended (before ShedLock unlocks); the agent gives its lock back. */
public final class EndLockAdvice {
  private EndLockAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter() {
    ShedLocks.ended();
  }
}
