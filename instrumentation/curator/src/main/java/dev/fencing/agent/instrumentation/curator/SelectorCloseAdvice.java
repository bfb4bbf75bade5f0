package dev.fencing.agent.instrumentation.curator;

import dev.fencing.agent.bootstrap.LockLibraries;
import net.bytebuddy.asm.Advice;

/** {@code LeaderSelector.close()}: its lock stops deciding the side effects outside every scope. */
public final class SelectorCloseAdvice {
  private SelectorCloseAdvice() {}

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.This Object selector) {
    LockLibraries.curatorSelectorClosed(selector);
  }
}
