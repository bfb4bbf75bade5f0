package dev.fencing.agent.instrumentation.curator;

import dev.fencing.agent.bootstrap.LockLibraries;
import net.bytebuddy.asm.Advice;

/**
 * {@code LeaderSelector.doWork()}: the mutex acquired while it runs is the selector's leadership, which then decides
 * the side effects outside every scope as a leader latch does (work the leader starts on threads of its own).
 */
public final class SelectorWorkAdvice {
  private SelectorWorkAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.This Object selector) {
    LockLibraries.curatorSelectorWorking(selector);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit() {
    LockLibraries.curatorSelectorWorking(null);
  }
}
