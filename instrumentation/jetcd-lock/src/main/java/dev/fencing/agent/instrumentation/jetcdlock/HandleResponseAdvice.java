package dev.fencing.agent.instrumentation.jetcdlock;

import dev.fencing.agent.bootstrap.JetcdLocks;
import net.bytebuddy.asm.Advice;

/** A keepalive reply: the lease lives its TTL from the keepalive's send; TTL 0 means it is gone. */
public final class HandleResponseAdvice {
  private HandleResponseAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(0) Object reply) {
    JetcdLocks.keepAliveAnswered(reply);
  }
}
