package dev.fencing.agent.policy;

import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.SideEffectGate;
import dev.fencing.agent.token.HighestTokenStore;
import dev.fencing.agent.token.TokenState;
import java.util.concurrent.TimeUnit;

/** The two gates every benchmark compares: the real policy holding a lease, and a gate that does nothing. */
public final class BenchGates {
  public static final String LOCK = "bench";
  /** What the no-op gate answers: the cheapest possible "tag" (a preallocated decision, no state read). */
  public static final Decision CONSTANT_TAG = Decision.tag(LOCK, 42);

  private BenchGates() {}

  /** A policy whose lease is valid for an hour (real clock): every decision is HOLDING → tag. */
  public static SideEffectPolicy holding() {
    TokenState state = new TokenState(LOCK, Long.MAX_VALUE, HighestTokenStore.none());
    state.granted(42, 1, 1, System.nanoTime() + TimeUnit.HOURS.toNanos(1));
    return new SideEffectPolicy(state, new SideEffectCounters(), false, false, true, false, 0);
  }

  public static SideEffectGate noop() {
    return (channel, write, fenced) -> CONSTANT_TAG;
  }

  /** Installs the gate the bootstrap bridge ({@link Fencing#decide}) calls: "agent" = {@link #holding()}, else no-op. */
  public static SideEffectGate install(String mode) {
    SideEffectGate g = "noop".equals(mode) ? noop() : holding();
    Fencing.install(g);
    return g;
  }
}
