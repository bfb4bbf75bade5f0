package dev.fencing.agent.instrumentation.curator;

import dev.fencing.agent.bootstrap.Captures;
import net.bytebuddy.asm.Advice;

/** The application releases the lock node {@code lockPath}: its scope ends before the node is deleted. */
public final class ReleaseLockAdvice {
  private ReleaseLockAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(0) String lockPath) {
    Captures.released("curator", lockPath);
  }
}
