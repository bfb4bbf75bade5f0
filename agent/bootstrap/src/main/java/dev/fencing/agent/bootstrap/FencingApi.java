package dev.fencing.agent.bootstrap;

/**
 * The bridge behind the application's optional API ({@code dev.fencing.api}, the {@code fencing-api} artifact), which
 * the agent never puts on the application's class path: the advice on the API's {@code Fencing.current()} asks
 * {@link #current()}, and the instrumentation that puts the section advice on a method annotated
 * {@code @Fenced("<lock>")} reports it with {@link #fenced} when its class is defined. java.base types only.
 */
public final class FencingApi {
  /** Implemented by the core: makes an annotated method a section of its lock. */
  public interface Hook {
    /**
     * The method {@code origin} ({@code <class>.<method>}) is annotated {@code @Fenced(lock)}: from now on it enters
     * that lock's scope as a declared section does ({@link Sections}), the agent campaigning for the lock.
     */
    void fenced(String origin, String lock);
  }

  private static volatile Hook hook;

  private FencingApi() {}

  public static void install(Hook h) {
    hook = h;
  }

  /**
   * What the API's {@code Fencing.current()} reports: the decision a write to a fenced destination made now on this
   * thread gets, when it carries a token (a TAG); null otherwise (no token applies, the write would be refused, the
   * core not started, an agent thread). Never throws; allocates nothing.
   */
  public static Decision current() {
    try {
      Decision d = Fencing.current();
      return d != null && d.isTag() && d.token() > 0 ? d : null;
    } catch (Throwable ignored) {
      return null; // the application's read never fails for the agent
    }
  }

  /** See {@link Hook#fenced}; nothing without the core. Never throws. */
  public static void fenced(String origin, String lock) {
    Hook h = hook;
    if (h != null) {
      try {
        h.fenced(origin, lock);
      } catch (Throwable ignored) {
        // the method then runs as if it were not annotated
      }
    }
  }
}
