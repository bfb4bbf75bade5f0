package dev.fencing.agent.instrumentation.curator;

import dev.fencing.agent.bootstrap.LockLibraries;
import net.bytebuddy.asm.Advice;

/** {@code InterProcessSemaphoreV2.returnLease(lease)}: the hold of that lease ends before its node is deleted. */
public final class ReturnLeaseAdvice {
  private ReturnLeaseAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(0) Object lease) {
    LockLibraries.curatorLeaseReturned(lease);
  }
}
