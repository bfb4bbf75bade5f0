package dev.fencing.agent.instrumentation.curator;

import dev.fencing.agent.bootstrap.LockLibraries;
import net.bytebuddy.asm.Advice;

/**
 * {@code InterProcessSemaphoreV2.acquire(qty, time, unit)}, behind every acquire of the semaphore and of
 * {@code InterProcessSemaphoreMutex}: while it runs, the semaphore's own mutex is not captured; when a semaphore of one
 * lease returns its lease (null: timed out), the calling thread holds the lock. Fields are read as Object (see
 * {@link LockLibraries}).
 */
public final class SemaphoreAcquireAdvice {
  private SemaphoreAcquireAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter() {
    LockLibraries.curatorSemaphoreAcquiring(true);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Return Object leases, @Advice.FieldValue("client") Object client,
      @Advice.FieldValue("leasesPath") String leasesPath, @Advice.FieldValue("maxLeases") int maxLeases) {
    LockLibraries.curatorSemaphoreAcquiring(false);
    if (leases != null) {
      LockLibraries.curatorSemaphoreAcquired(client, leasesPath, maxLeases, leases);
    }
  }
}
