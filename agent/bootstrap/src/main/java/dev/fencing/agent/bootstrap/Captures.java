package dev.fencing.agent.bootstrap;

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

  /** See {@link CaptureHook#acquired}. */
  public static void acquired(String library, String name, String holdId, long token, long sessionId,
      long aliveAtNanos, long timeoutMillis) {
    try {
      hook.acquired(library, name, holdId, token, sessionId, aliveAtNanos, timeoutMillis);
    } catch (Throwable t) {
      // the application's lock works as without the agent; the core logs its own failures
    }
  }

  /** See {@link CaptureHook#released}. */
  public static void released(String library, String holdId) {
    try {
      hook.released(library, holdId);
    } catch (Throwable t) {
      // as above
    }
  }

  /** See {@link CaptureHook#alive}. */
  public static void alive(long sessionId, long aliveAtNanos, long timeoutMillis) {
    try {
      hook.alive(sessionId, aliveAtNanos, timeoutMillis);
    } catch (Throwable t) {
      // as above
    }
  }

  /** See {@link CaptureHook#granted}. */
  public static void granted(String library, String name, String holdId, long token, long sessionId) {
    try {
      hook.granted(library, name, holdId, token, sessionId);
    } catch (Throwable t) {
      // as above
    }
  }

  /** See {@link CaptureHook#entered}. */
  public static void entered(String holdId) {
    try {
      hook.entered(holdId);
    } catch (Throwable t) {
      // as above
    }
  }

  /** See {@link CaptureHook#renewed}. */
  public static void renewed(long sessionId, long aliveAtNanos, long timeoutMillis) {
    try {
      hook.renewed(sessionId, aliveAtNanos, timeoutMillis);
    } catch (Throwable t) {
      // as above
    }
  }

  /** See {@link CaptureHook#sessionLost}. */
  public static void sessionLost(long sessionId, String why) {
    try {
      hook.sessionLost(sessionId, why);
    } catch (Throwable t) {
      // as above
    }
  }

  /** See {@link CaptureHook#leading}. */
  public static void leading(String library, String name, String holdId, long token, long sessionId,
      long aliveAtNanos, long timeoutMillis) {
    try {
      hook.leading(library, name, holdId, token, sessionId, aliveAtNanos, timeoutMillis);
    } catch (Throwable t) {
      // as above
    }
  }

  /** See {@link CaptureHook#closed}. */
  public static void closed(String library, String name) {
    try {
      hook.closed(library, name);
    } catch (Throwable t) {
      // as above
    }
  }
}
