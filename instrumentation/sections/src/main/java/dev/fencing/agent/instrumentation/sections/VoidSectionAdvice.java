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

  /**
   * Returns true to skip the body. What the exit restores travels in a local variable rather than as the enter
   * value: skipping on a boolean needs no type resolved when the advice is built.
   */
  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
  public static boolean enter(@Advice.Origin("#t.#m") String origin,
      @Advice.Local("fencingSection") Object entered) {
    entered = Sections.enter(origin, true);
    return entered == Sections.SKIP;
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Local("fencingSection") Object entered) {
    Sections.exit(entered);
  }
}
