package dev.fencing.agent.instrumentation.redisson;

import dev.fencing.agent.bootstrap.RedissonLocks;
import net.bytebuddy.asm.Advice;

/** {@code lockAndGetToken(...)}, {@code tryLockAndGetToken(...)} returned a token: the thread holds the lock. */
public final class TokenReturnedAdvice {
  private TokenReturnedAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.This Object lock, @Advice.FieldValue("name") String rawName,
      @Advice.Return Long token) {
    if (token != null) {
      RedissonLocks.returned(lock, rawName);
    }
  }
}
