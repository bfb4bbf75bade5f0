package dev.fencing.agent.instrumentation.jetcdlock;

import dev.fencing.agent.bootstrap.JetcdLocks;
import java.util.concurrent.CompletableFuture;
import net.bytebuddy.asm.Advice;

/** {@code Lease.grant}: the lease lives its granted TTL from the time the grant was asked for. */
public final class GrantAdvice {
  private GrantAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static long enter() {
    return System.nanoTime();
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Enter long sentAt, @Advice.Return CompletableFuture<?> result) {
    JetcdLocks.leaseGranting(result, sentAt);
  }
}
