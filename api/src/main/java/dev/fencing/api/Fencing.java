package dev.fencing.api;

/**
 * The Fencing Agent's optional API. Without the agent every method is a no-op; with it, the agent answers (it changes
 * this class when the application loads it: the application needs no other dependency, and the agent none on this
 * artifact).
 */
public final class Fencing {
  private Fencing() {}

  /**
   * The lock, token and grant a write to a fenced resource made now on this thread would carry: inside a section or a
   * lock the agent captured, that lock's; elsewhere the JVM-wide lock's, or a token the request being served brought
   * in; empty when none applies (outside every scope without a JVM-wide lock, before the first grant, when the agent
   * would refuse the write, or without the agent). After a lease expired it is the last token, which a resource that
   * saw a successor's higher token refuses. Cheap: no lock, no allocation in the steady state.
   */
  public static FencingContext current() {
    return FencingContext.empty();
  }
}
