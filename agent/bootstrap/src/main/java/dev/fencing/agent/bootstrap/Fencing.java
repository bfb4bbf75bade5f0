package dev.fencing.agent.bootstrap;

/**
 * The bridge between instrumented classes (which may live in the JDK) and the agent core, which lives in an isolated
 * class loader. Hooks call {@link #decide}; the core installs the gate once at startup. java.base types only.
 */
public final class Fencing {
  private static volatile SideEffectGate gate;
  private static volatile Decision fallback = Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED);
  private static volatile boolean started;
  private static volatile JdbcHook jdbc = JdbcHook.NOOP;
  private static volatile HttpHook http = HttpHook.NOOP;
  private static volatile KafkaHook kafka = KafkaHook.NOOP;

  private Fencing() {}

  /** Asks the policy what to do with one side effect. Never null; lock-free and allocation-free on the hot path. */
  public static Decision decide(Channel channel, boolean write, boolean fenced) {
    SideEffectGate g = gate;
    if (g != null) {
      return g.decide(channel, write, fenced);
    }
    // The core failed to load: honour fail-mode (resolved by the entry point), but never block reads.
    Decision f = fallback;
    return write || !f.isBlock() ? f : Decision.pass(f.lock());
  }

  /** See {@link SideEffectGate#checkNow}: never waits, counts only a block. */
  public static Decision checkNow(Channel channel, boolean fenced) {
    SideEffectGate g = gate;
    if (g != null) {
      return g.checkNow(channel, fenced);
    }
    return fallback;
  }

  /** See {@link SideEffectGate#recheck}: null when buffered records may leave now. */
  public static Decision recheck(Channel channel, boolean fenced, Decision taggedWith, int count) {
    SideEffectGate g = gate;
    if (g != null) {
      return g.recheck(channel, fenced, taggedWith, count);
    }
    return null; // no core: send() decided by fail-mode already, with nothing to compare against
  }

  /**
   * A hook could not do its part for one call ({@link SideEffectGate#hookFailed}): never throws, never null. The hook
   * then blocks the call with its library's usual exception, or lets it run untagged, as the decision says.
   */
  public static Decision hookFailed(Channel channel, boolean write, Throwable error) {
    SideEffectGate g = gate;
    if (g != null) {
      try {
        return g.hookFailed(channel, write, error);
      } catch (Throwable ignored) {
        // the policy itself failed: the entry point's fail-mode fallback below
      }
    }
    Decision f = fallback;
    return write || !f.isBlock() ? f : Decision.pass(f.lock());
  }

  /**
   * The lock and token a side effect made now on this thread would carry (see {@link SideEffectGate#current()}), for
   * span attributes; null before the core starts and on the agent's own threads. No counting, no waiting.
   */
  public static Decision current() {
    SideEffectGate g = gate;
    return g != null ? g.current() : null;
  }

  /** The JDBC hook the JDBC advice calls (a no-op until the core installs it). */
  public static JdbcHook jdbc() {
    return jdbc;
  }

  public static void installJdbc(JdbcHook hook) {
    jdbc = hook;
  }

  /** The HTTP hook the HTTP client advice calls (lets everything pass until the core installs it). */
  public static HttpHook http() {
    return http;
  }

  public static void installHttp(HttpHook hook) {
    http = hook;
  }

  /** The Kafka hook the producer advice calls (the bridge's fallback until the core installs it). */
  public static KafkaHook kafka() {
    return kafka;
  }

  public static void installKafka(KafkaHook hook) {
    kafka = hook;
  }

  public static void install(SideEffectGate newGate) {
    gate = newGate;
  }

  /** Used when the agent core could not be loaded at all. */
  public static void installFallback(Decision decision) {
    fallback = decision;
    gate = null;
  }

  /** Returns true the first time only: a second -javaagent or a dynamic attach of the same agent is ignored. */
  public static synchronized boolean markStarted() {
    if (started) {
      return false;
    }
    started = true;
    return true;
  }
}
