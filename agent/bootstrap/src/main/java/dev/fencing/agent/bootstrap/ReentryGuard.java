package dev.fencing.agent.bootstrap;

/**
 * Keeps hooks off the agent's own traffic and off nested calls: a library that calls another instrumented library
 * (an HTTP client on top of HttpURLConnection, a pool wrapping a driver) must be tagged and counted once, by the
 * outermost hook.
 */
public final class ReentryGuard {
  private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);

  private ReentryGuard() {}

  /** True on the agent's own threads: their calls are never fenced. */
  public static boolean isAgentThread() {
    return Thread.currentThread() instanceof AgentThread;
  }

  /**
   * Enters a hook. Returns true if this is the outermost hook on this thread (the one that must act); every call
   * must be paired with {@link #exit()}.
   */
  public static boolean enter() {
    return DEPTH.get()[0]++ == 0;
  }

  public static void exit() {
    int[] depth = DEPTH.get();
    if (depth[0] > 0) {
      depth[0]--;
    }
  }
}
