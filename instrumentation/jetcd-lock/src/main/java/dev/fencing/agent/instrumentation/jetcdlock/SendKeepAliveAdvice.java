package dev.fencing.agent.instrumentation.jetcdlock;

import dev.fencing.agent.bootstrap.JetcdLocks;
import net.bytebuddy.asm.Advice;

/** jetcd's keepalive loop considers one lease: the send time of the keepalive it sends, if it sends one. */
public final class SendKeepAliveAdvice {
  private SendKeepAliveAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(0) Object observer) {
    JetcdLocks.keepAliveSending(observer);
  }
}
