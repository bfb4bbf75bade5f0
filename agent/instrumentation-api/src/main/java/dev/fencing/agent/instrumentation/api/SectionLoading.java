package dev.fencing.agent.instrumentation.api;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which declared sections are in place: the section instrumentation reports each declared class it saw being defined
 * and each declared method it put the section advice on. A section whose class never loads (a typo, a class the
 * application does not use) is not a failure: /status lists it as not loaded and the agent logs it.
 */
public final class SectionLoading {
  private static final Set<String> CLASSES = ConcurrentHashMap.newKeySet();
  private static final Set<String> METHODS = ConcurrentHashMap.newKeySet();

  private SectionLoading() {}

  /** The declared class {@code className} is being defined (by some class loader). */
  public static void classSeen(String className) {
    CLASSES.add(className);
  }

  /** The section advice went on a method {@code <class>.<method>} (at least one overload). */
  public static void methodInstrumented(String origin) {
    METHODS.add(origin);
  }

  /** "loaded" (instrumented), "no such method" (the class loaded without it), or "class not loaded". */
  public static String status(SectionSpec s) {
    if (METHODS.contains(s.origin())) {
      return "loaded";
    }
    return CLASSES.contains(s.className()) ? "no such method" : "class not loaded";
  }

  public static boolean loaded(SectionSpec s) {
    return METHODS.contains(s.origin());
  }

  /** For tests: forgets everything. */
  static void reset() {
    CLASSES.clear();
    METHODS.clear();
  }
}
