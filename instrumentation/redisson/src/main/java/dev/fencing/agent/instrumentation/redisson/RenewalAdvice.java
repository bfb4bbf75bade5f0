package dev.fencing.agent.instrumentation.redisson;

import dev.fencing.agent.bootstrap.RedissonLocks;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import net.bytebuddy.asm.Advice;

/** The watchdog's {@code RenewalTask.execute()}: one round extending the leases of the locks it keeps. */
public final class RenewalAdvice {
  private RenewalAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static long enter() {
    return System.nanoTime();
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Enter long sentAt, @Advice.Return CompletionStage<?> round,
      @Advice.FieldValue("name2entry") Map<?, ?> renewing,
      @Advice.FieldValue("internalLockLeaseTime") long leaseMillis) {
    RedissonLocks.renewing(round, renewing, sentAt, leaseMillis);
  }
}
