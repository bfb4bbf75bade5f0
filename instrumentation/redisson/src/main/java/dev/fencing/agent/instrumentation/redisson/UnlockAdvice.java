package dev.fencing.agent.instrumentation.redisson;

import dev.fencing.agent.bootstrap.RedissonLocks;
import net.bytebuddy.asm.Advice;

/** {@code unlockAsync(threadId)} (behind {@code unlock()}): the hold ends before the script runs. */
public final class UnlockAdvice {
  private UnlockAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.FieldValue("name") String rawName, @Advice.Argument(0) long threadId) {
    RedissonLocks.unlocking(rawName, threadId);
  }
}
