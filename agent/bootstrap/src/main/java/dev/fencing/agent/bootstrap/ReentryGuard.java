package dev.fencing.agent.bootstrap;

/**
 * Keeps hooks off the agent's own traffic and off nested calls: a library that calls another instrumented library
 * (an HTTP client on top of HttpURLConnection, a pool wrapping a driver) must be tagged and counted once, by the
 * outermost hook.
 */
public final class ReentryGuard {
  private static final ThreadLocal<HookThread> STATE = ThreadLocal.withInitial(HookThread::new);

  private ReentryGuard() {}

  /**
   * One thread's hook state: how deep it is in hooked calls, and a probe its hook may use for identity lookups while
   * it is in the hook, so that the hook reads the thread's state once.
   */
  public static final class HookThread {
    private int depth;
    private final IdentityProbe probe = new IdentityProbe();
    private Object rememberedBy;
    private Object remembered;

    private HookThread() {}

    /** True when the hook that entered last is the outermost one (the one that must act). */
    public boolean outermost() {
      return depth == 1;
    }

    /** This thread's probe; used by one lookup at a time, and cleared after it. */
    public IdentityProbe probe() {
      return probe;
    }

    /**
     * What {@code owner} (a hook) keeps on this thread between its calls, or null: what the thread's next call most
     * likely needs again (the JDBC hook: the statement prepared last, the session of the connection it ran on), so
     * that finding it takes one comparison instead of an identity lookup. It must not hold what the application owns
     * strongly: it lives as long as the thread.
     */
    public Object remembered(Object owner) {
      return rememberedBy == owner ? remembered : null;
    }

    /** Keeps {@code value} for {@code owner}'s next calls on this thread, replacing what any hook kept. */
    public void remember(Object owner, Object value) {
      rememberedBy = owner;
      remembered = value;
    }
  }

  /**
   * A lookup key equal to any {@link java.lang.ref.Reference} to the object it is set to, with that object's identity
   * hash: a map keyed by weak references to objects is searched with it without allocating a key per lookup.
   */
  public static final class IdentityProbe {
    private Object referent;
    private int hash;

    private IdentityProbe() {}

    public void set(Object o) {
      referent = o;
      hash = System.identityHashCode(o);
    }

    public Object referent() {
      return referent;
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof java.lang.ref.Reference && ((java.lang.ref.Reference<?>) other).get() == referent
          && referent != null;
    }
  }

  /** True on the agent's own threads: their calls are never fenced. */
  public static boolean isAgentThread() {
    return Thread.currentThread() instanceof AgentThread;
  }

  /**
   * Enters a hook. Returns true if this is the outermost hook on this thread (the one that must act); every call
   * must be paired with {@link #exit()}.
   */
  public static boolean enter() {
    return STATE.get().depth++ == 0;
  }

  /** The calling thread's hook state, without entering a hook (its probe and what a hook keeps on it). */
  public static HookThread thread() {
    return STATE.get();
  }

  /**
   * Enters a hook as {@link #enter()} does and returns the thread's state ({@link HookThread#outermost()} tells
   * whether this hook must act); every call must be paired with {@link #exit()}.
   */
  public static HookThread enterThread() {
    HookThread t = STATE.get();
    t.depth++;
    return t;
  }

  public static void exit() {
    HookThread t = STATE.get();
    if (t.depth > 0) {
      t.depth--;
    }
  }
}
