package dev.fencing.agent.instrumentation.shedlock;

import dev.fencing.agent.bootstrap.ShedLocks;
import net.bytebuddy.asm.Advice;

/**
 * {@code LockAssert.startLock(name)} returned: ShedLock holds its lock and the task runs next. The agent takes its lock
 * of that name and puts the thread in its scope; when it cannot, {@code ShedLockNotFencedException} leaves here, inside
 * ShedLock's try block, so ShedLock's finally ends the run and unlocks as after a failed task. Not suppressed: that
 * exception is the point (the bridge throws nothing else).
 */
public final class StartLockAdvice {
  private StartLockAdvice() {}

  @Advice.OnMethodExit
  public static void exit(@Advice.Argument(0) String name) {
    // The name LockAssert.TestHelper.makeAllAssertsPass(true) marks a test's thread with is no lock at all.
    ShedLocks.started(name, !"net.javacrumbs.shedlock.core.test-lock".equals(name));
  }
}
