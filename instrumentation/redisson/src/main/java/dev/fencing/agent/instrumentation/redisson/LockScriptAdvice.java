package dev.fencing.agent.instrumentation.redisson;

import dev.fencing.agent.bootstrap.RedissonLocks;
import java.util.concurrent.TimeUnit;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * {@code RedissonFencedLock.tryLockInnerAsync(waitTime, leaseTime, unit, threadId, command)}: the script of
 * the inherited {@code lock} and {@code tryLock}, which INCRs a token without returning it; the caller gets a future
 * that records the grant first.
 */
public final class LockScriptAdvice {
  private LockScriptAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static long enter() {
    return System.nanoTime();
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Enter long sentAt, @Advice.FieldValue("name") String rawName,
      @Advice.Argument(1) long leaseTime, @Advice.Argument(2) TimeUnit unit, @Advice.Argument(3) long threadId,
      @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object result) {
    result = RedissonLocks.evaluating(rawName, threadId, sentAt, unit.toMillis(leaseTime), result);
  }
}
