package dev.fencing.agent.instrumentation.fencingapi;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.FencingApi;
import dev.fencing.api.FencingContext;
import net.bytebuddy.asm.Advice;

/** The API's {@code Fencing.current()} returns the lock, token and grant the bridge reports; empty when none. */
public final class CurrentAdvice {
  private CurrentAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Return(readOnly = false) FencingContext context) {
    Decision d = FencingApi.current();
    if (d != null) {
      context = FencingContext.of(d.lock(), d.token(), d.grant());
    }
  }
}
