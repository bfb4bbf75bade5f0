package dev.fencing.agent.bootstrap;

/**
 * A per-thread nesting counter for one hooked method family, independent of {@link ReentryGuard}: for methods that
 * call themselves internally (HttpURLConnection.getResponseCode), so only the outermost call acts.
 */
public final class CallDepth {
  /** HttpURLConnection.getResponseCode. */
  public static final CallDepth RESPONSE_CODE = new CallDepth();

  private final ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);

  private CallDepth() {}

  /** True for the outermost call; always pair with {@link #exit()}. */
  public boolean enter() {
    return depth.get()[0]++ == 0;
  }

  public void exit() {
    int[] d = depth.get();
    if (d[0] > 0) {
      d[0]--;
    }
  }
}
