package dev.fencing.agent.bootstrap;

/**
 * One lock's scope on a thread: while a thread runs a declared section ({@link Sections}), or a task handed off from
 * one, its side effects are decided by this lock's policy ({@link #gate()}), not by the JVM-wide lock nor by an
 * inbound token. Implemented by the agent core, one instance per configured lock, built once at startup: entering a
 * scope allocates nothing. java.base types only.
 */
public abstract class LockScope {
  private final String lock;
  private final SideEffectGate gate;

  protected LockScope(String lock, SideEffectGate gate) {
    this.lock = lock;
    this.gate = gate;
  }

  /** The lock's name (the {@code lock} label of its metrics and the lock carried with its token). */
  public final String lock() {
    return lock;
  }

  /** The lock's policy: decides every side effect made in this scope. */
  public final SideEffectGate gate() {
    return gate;
  }

  /**
   * True when a {@code void} section of this lock may run now: while this JVM holds a valid lease on the lock (the
   * local deadline applied), and always in observe mode (which never changes what the application does). Lock-free.
   */
  public abstract boolean runsVoid();

  /** A {@code void} section was entered without the lease and skipped: counted. */
  public abstract void skipped();

  @Override
  public String toString() {
    return "LockScope[" + lock + "]";
  }
}
