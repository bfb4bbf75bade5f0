package dev.fencing.agent.instrumentation.redisson;

import dev.fencing.agent.bootstrap.RedissonLocks;
import net.bytebuddy.asm.Advice;

/** {@code lock()}, {@code lockInterruptibly()} (and with a lease) returned: the thread holds the lock. */
public final class LockReturnedAdvice {
  private LockReturnedAdvice() {}

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.This Object lock, @Advice.FieldValue("name") String rawName,
      @Advice.Thrown Throwable thrown) {
    if (thrown == null) {
      RedissonLocks.returned(lock, rawName);
    }
  }
}
