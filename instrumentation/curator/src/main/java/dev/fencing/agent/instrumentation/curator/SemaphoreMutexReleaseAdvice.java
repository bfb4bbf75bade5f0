package dev.fencing.agent.instrumentation.curator;

import dev.fencing.agent.bootstrap.LockLibraries;
import net.bytebuddy.asm.Advice;

/**
 * {@code InterProcessSemaphoreMutex.release()} closes its lease itself (not through the semaphore): the hold ends
 * before the lease node is deleted.
 */
public final class SemaphoreMutexReleaseAdvice {
  private SemaphoreMutexReleaseAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.FieldValue("lease") Object lease) {
    LockLibraries.curatorLeaseReturned(lease);
  }
}
