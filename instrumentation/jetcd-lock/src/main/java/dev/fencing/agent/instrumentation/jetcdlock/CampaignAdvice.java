package dev.fencing.agent.instrumentation.jetcdlock;

import dev.fencing.agent.bootstrap.JetcdLocks;
import java.util.concurrent.CompletableFuture;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * {@code Election.campaign(name, leaseId, proposal)}: the application gets a future that completes once the agent has
 * recorded the leadership (the campaign key's create revision is the token), and whose waiter enters the election's
 * scope. jetcd types are read as Object (see {@code LockLibraries} for why).
 */
public final class CampaignAdvice {
  private CampaignAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Argument(0) Object name, @Advice.Argument(1) long leaseId,
      @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) CompletableFuture<?> result) {
    result = JetcdLocks.campaigning(name, leaseId, result);
  }
}
