package dev.fencing.agent.instrumentation.curator;

import dev.fencing.agent.bootstrap.LockLibraries;
import net.bytebuddy.asm.Advice;

/**
 * The application now holds the lock node {@code ourPath} (null: the attempt timed out): the bridge reads its czxid
 * (the fencing token: a zxid, ordered across the ensemble) with the application's own client and reports it. Fields
 * are read as Object: see {@link LockLibraries} for why the advice names no ZooKeeper type.
 */
public final class AttemptLockAdvice {
  private AttemptLockAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Return String ourPath, @Advice.FieldValue("client") Object client,
      @Advice.FieldValue("basePath") String basePath) {
    if (ourPath != null) {
      LockLibraries.curatorAcquired(client, basePath, ourPath);
    }
  }
}
