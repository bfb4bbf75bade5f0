package dev.fencing.agent.instrumentation.redisson;

import dev.fencing.agent.bootstrap.RedissonLocks;
import net.bytebuddy.asm.Advice;

/** {@code tryLock(...)} returned true: the thread holds the lock. */
public final class TryLockReturnedAdvice {
  private TryLockReturnedAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.This Object lock, @Advice.FieldValue("name") String rawName,
      @Advice.Return boolean locked) {
    if (locked) {
      RedissonLocks.returned(lock, rawName);
    }
  }
}
