package dev.fencing.agent.instrumentation.redisson;

import dev.fencing.agent.bootstrap.RedissonLocks;
import java.util.concurrent.TimeUnit;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * {@code RedissonFencedLock.tryLockInnerAsync(leaseTime, unit, threadId)}: the script that takes the lock and returns
 * the token it {@code INCR}ed; the caller gets a future that records the grant first.
 */
public final class TokenScriptAdvice {
  private TokenScriptAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static long enter() {
    return System.nanoTime();
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Enter long sentAt, @Advice.FieldValue("name") String rawName,
      @Advice.Argument(0) long leaseTime, @Advice.Argument(1) TimeUnit unit, @Advice.Argument(2) long threadId,
      @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object result) {
    result = RedissonLocks.evaluating(rawName, threadId, sentAt, unit.toMillis(leaseTime), result);
  }
}
