package dev.fencing.agent.bootstrap;

import java.util.function.Consumer;

/**
 * The bridge between the capture advice, inlined into the application's lock libraries, and the agent core: the
 * advice reports acquisitions, releases and its coordinator's liveness here (a no-op until the core installs its
 * hook, and for a switched-off capture). Errors of the hook never reach the application. java.base types only.
 */
public final class Captures {
  private static volatile CaptureHook hook = CaptureHook.NOOP;

  private Captures() {}

  public static void install(CaptureHook h) {
    hook = h == null ? CaptureHook.NOOP : h;
  }

  public static CaptureHook hook() {
    return hook;
  }

  /**
   * Calls the hook; whatever it throws stays here: the application's lock works as without the agent, and the core
   * logs its own failures. Reports come from lock, release and keepalive paths, never from a side effect's.
   */
  private static void report(Consumer<CaptureHook> call) {
    try {
      call.accept(hook);
    } catch (Throwable t) {
      // see above
    }
  }

  /** See {@link CaptureHook#acquired}. */
  public static void acquired(String library, String where, String name, String holdId, long token, long sessionId,
      long aliveAtNanos, long timeoutMillis) {
    report(h -> h.acquired(library, where, name, holdId, token, sessionId, aliveAtNanos, timeoutMillis));
  }

  /** See {@link CaptureHook#unverified}. */
  public static void unverified(String library, String where, String name, String holdId, String why) {
    report(h -> h.unverified(library, where, name, holdId, why));
  }

  /** See {@link CaptureHook#released}. */
  public static void released(String library, String holdId) {
    report(h -> h.released(library, holdId));
  }

  /** See {@link CaptureHook#alive}. */
  public static void alive(long sessionId, long aliveAtNanos, long timeoutMillis) {
    report(h -> h.alive(sessionId, aliveAtNanos, timeoutMillis));
  }

  /** See {@link CaptureHook#granted}. */
  public static void granted(String library, String where, String name, String holdId, long token,
      long sessionId) {
    report(h -> h.granted(library, where, name, holdId, token, sessionId));
  }

  /** See {@link CaptureHook#entered}. */
  public static void entered(String holdId) {
    report(h -> h.entered(holdId));
  }

  /** See {@link CaptureHook#renewed}. */
  public static void renewed(long sessionId, long aliveAtNanos, long timeoutMillis) {
    report(h -> h.renewed(sessionId, aliveAtNanos, timeoutMillis));
  }

  /** See {@link CaptureHook#sessionLost}. */
  public static void sessionLost(long sessionId, String why) {
    report(h -> h.sessionLost(sessionId, why));
  }

  /** See {@link CaptureHook#leading}. */
  public static void leading(String library, String where, String name, String holdId, long token, long sessionId,
      long aliveAtNanos, long timeoutMillis) {
    report(h -> h.leading(library, where, name, holdId, token, sessionId, aliveAtNanos, timeoutMillis));
  }

  /** See {@link CaptureHook#leads}. */
  public static void leads(String library, String where, String name) {
    report(h -> h.leads(library, where, name));
  }

  /** See {@link CaptureHook#closed}. */
  public static void closed(String library, String where, String name) {
    report(h -> h.closed(library, where, name));
  }
}
