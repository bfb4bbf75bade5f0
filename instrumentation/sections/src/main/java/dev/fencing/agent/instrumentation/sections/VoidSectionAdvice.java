package dev.fencing.agent.instrumentation.sections;

import dev.fencing.agent.bootstrap.Sections;
import net.bytebuddy.asm.Advice;

/**
 * A declared {@code void} section: skipped (the body does not run) unless this JVM holds the section's lock;
 * otherwise run in the lock's scope, which the exit restores, also when the method throws. An agent error lets the
 * method run as if it were not declared.
 */
public final class VoidSectionAdvice {
  private VoidSectionAdvice() {}

  @Advice.OnMethodEnter(skipOn = Sections.Skipped.class, suppress = Throwable.class)
  public static Object enter(@Advice.Origin("#t.#m") String origin) {
    return Sections.enter(origin, true);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Enter Object entered) {
    Sections.exit(entered);
  }
}
