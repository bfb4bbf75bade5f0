package dev.fencing.agent.instrumentation;

import net.bytebuddy.asm.Advice;

/**
 * On every {@code loadClass(String[, boolean])} of a class loader: a name in the agent's bootstrap package is answered
 * with the boot loader's class and the loader's own code is skipped. Inlined into the application's class loaders
 * (whose own delegation may refuse that package), so JDK classes only, and nothing that could load a class through
 * the loader it runs in. Any failure (a name the boot loader does not have) leaves the loader's own answer.
 */
public final class BootDelegationAdvice {
  private BootDelegationAdvice() {}

  /** Returns the boot loader's class for a bootstrap-package name (the loader's body is then skipped), else null. */
  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
  public static Class<?> enter(@Advice.Argument(0) String name) {
    // A literal: the shaded agent must keep naming its own package (which it never relocates).
    if (name != null && name.startsWith("dev.fencing.agent.bootstrap.")) {
      try {
        return Class.forName(name, false, null);
      } catch (ClassNotFoundException notInTheBootstrapPart) {
        return null;
      }
    }
    return null;
  }

  /** Not on throwable: a skipped body returns normally, and an exception of the loader's own stays untouched. */
  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Enter Class<?> boot, @Advice.Return(readOnly = false) Class<?> result) {
    if (boot != null) {
      result = boot;
    }
  }
}
