package dev.fencing.agent.bootstrap;

import java.util.Map;

/**
 * Declared sections ({@code fencing.sections=<class>#<method>@<lock>}): what the section advice, inlined into the
 * declared methods, calls on entry and on exit. The core installs the table (class name + '.' + method name to the
 * lock's scope) once at startup; until then, and for a method it does not name, entry changes nothing.
 *
 * <p>Entry, for the lock of the section:
 * <ul>
 *   <li>a non-{@code void} method always runs in the lock's scope: holding, its side effects are tagged with the
 *       lock's token; not holding, the lock's policy refuses them as on standby (the caller sees the usual error);
 *   <li>a {@code void} method runs in the scope while this JVM holds the lock, and is skipped (not run at all, counted)
 *       when it does not: "run on one replica" (observe mode never skips);
 *   <li>every entry decides again, also an entry inside a running section (recursion, re-entry from a callback): an
 *       inner section of the same lock re-checks the lease and joins the scope; an inner section of another lock puts
 *       that lock's scope on the thread until it returns (the innermost section decides);
 *   <li>a section is a lock scope, not an in-JVM mutex: entries on different threads of the holder run at once.
 * </ul>
 * Exit restores exactly what was current before the entry (an outer section's scope, an inbound token, nothing), also
 * when the method throws. java.base types only.
 */
public final class Sections {
  /** Returned by {@link #enter} for a void section that must not run: the advice skips the method body. */
  public static final class Skipped {
    private Skipped() {}
  }

  /** The one instance of {@link Skipped}. */
  public static final Object SKIP = new Skipped();

  private static volatile Map<String, LockScope> byMethod = Map.of();

  private Sections() {}

  /** Installs the table: {@code <binary class name>.<method name>} to the scope of the section's lock. */
  public static synchronized void install(Map<String, LockScope> sections) {
    byMethod = Map.copyOf(sections);
  }

  /**
   * Adds the section {@code origin} of {@code scope} (a method annotated {@code @Fenced}, met when its class is
   * defined), unless the table has it already: a section of the configuration wins. Copies the table, so entries
   * stay lock-free.
   */
  public static synchronized void add(String origin, LockScope scope) {
    if (byMethod.containsKey(origin)) {
      return;
    }
    Map<String, LockScope> m = new java.util.HashMap<>(byMethod);
    m.put(origin, scope);
    byMethod = Map.copyOf(m);
  }

  /** The scope the section {@code origin} ({@code <class>.<method>}) runs in, or null when it is not declared. */
  public static LockScope scopeOf(String origin) {
    return origin == null ? null : byMethod.get(origin);
  }

  /**
   * Entry into the section {@code origin}. Returns what {@link #exit} must be given: {@link #SKIP} when a void section
   * must be skipped, null when nothing changed (an unknown method), otherwise the previous scope. Never throws.
   */
  public static Object enter(String origin, boolean isVoid) {
    LockScope scope = scopeOf(origin);
    if (scope == null) {
      return null;
    }
    if (isVoid && !scope.runsVoid()) {
      scope.skipped();
      return SKIP;
    }
    return TokenContext.enterScope(scope);
  }

  /** Undoes the matching {@link #enter}. */
  public static void exit(Object entered) {
    if (entered == null || entered == SKIP) {
      return;
    }
    TokenContext.exitScope(entered);
  }
}
