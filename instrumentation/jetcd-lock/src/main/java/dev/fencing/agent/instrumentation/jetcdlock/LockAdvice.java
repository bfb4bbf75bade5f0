package dev.fencing.agent.instrumentation.jetcdlock;

import dev.fencing.agent.bootstrap.JetcdLocks;
import java.util.concurrent.CompletableFuture;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * {@code Lock.lock(name, leaseId)}: the application gets a future that completes once the agent has read the lock
 * key's create revision (the token), and whose waiter enters the lock's scope. jetcd types are read as Object (see
 * {@code LockLibraries} for why).
 */
public final class LockAdvice {
  private LockAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.This Object lock, @Advice.Argument(0) Object name, @Advice.Argument(1) long leaseId,
      @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) CompletableFuture<?> result) {
    result = JetcdLocks.locking(lock, name, leaseId, result);
  }
}
