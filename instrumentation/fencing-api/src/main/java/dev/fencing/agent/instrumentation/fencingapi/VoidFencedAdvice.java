package dev.fencing.agent.instrumentation.fencingapi;

import dev.fencing.agent.bootstrap.Sections;
import net.bytebuddy.asm.Advice;

/**
 * A {@code void} method annotated {@code @Fenced}: skipped unless this JVM holds the lock, otherwise run in the
 * lock's scope, restored on exit (also when it throws). An agent error lets the method run as if not annotated.
 */
public final class VoidFencedAdvice {
  private VoidFencedAdvice() {}

  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
  public static boolean enter(@Advice.Origin("#t.#m") String origin, @Advice.Local("fencingSection") Object entered) {
    entered = Sections.enter(origin, true);
    return entered == Sections.SKIP;
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Local("fencingSection") Object entered) {
    Sections.exit(entered);
  }
}
