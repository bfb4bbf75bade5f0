package dev.fencing.agent.instrumentation.fencingapi;

import dev.fencing.agent.bootstrap.Sections;
import net.bytebuddy.asm.Advice;

/**
 * A method annotated {@code @Fenced} that returns a value: always run, in the lock's scope (not holding the lock, its
 * side effects are refused as on standby); the exit restores the previous scope, also when it throws.
 */
public final class ValueFencedAdvice {
  private ValueFencedAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static Object enter(@Advice.Origin("#t.#m") String origin) {
    return Sections.enter(origin, false);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Enter Object entered) {
    Sections.exit(entered);
  }
}
