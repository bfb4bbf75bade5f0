package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.LockScope;
import dev.fencing.agent.bootstrap.SideEffectGate;
import dev.fencing.agent.bootstrap.TokenContext;
import java.util.Map;

/**
 * The gate of a JVM with declared sections: each side effect goes to the policy of the lock whose scope the thread is
 * in (docs/DESIGN.md section 4, "Lock scopes"): inside a section (or a task handed off from one) that lock's policy;
 * otherwise the JVM-wide lock's policy, or without one the policy of a captured leader latch while it leads (see
 * {@link #lead}), or else that of "outside every scope" (inbound token or pass).
 * The agent's own threads are passed by every policy. One thread-local read and no allocation per side effect.
 */
public final class ScopedGate implements SideEffectGate {
  private final SideEffectGate outside;
  private final Map<String, SideEffectGate> byLock;
  /** The policies of the application's locks captured so far, by lock name (each name is one lock's). */
  private final Map<String, SideEffectGate> captured = new java.util.concurrent.ConcurrentHashMap<>();
  /**
   * The policy of an application's leader latch that decides outside every scope instead of {@link #outside} (a JVM
   * without a JVM-wide lock whose application leads with a captured latch), or null.
   */
  private volatile SideEffectGate led;

  /** {@code outside}: the JVM-wide lock's policy, or that of "outside every scope"; {@code byLock}: every lock's. */
  public ScopedGate(SideEffectGate outside, Map<String, SideEffectGate> byLock) {
    this.outside = outside;
    this.byLock = Map.copyOf(byLock);
  }

  /**
   * Makes {@code latch} decide the side effects outside every scope, unless another latch does already; returns
   * whether it does now.
   */
  public synchronized boolean lead(SideEffectGate latch) {
    if (led == null) {
      led = latch;
    }
    return led == latch;
  }

  /** {@code latch} stops deciding outside every scope (its latch was closed). */
  public synchronized void unlead(SideEffectGate latch) {
    if (led == latch) {
      led = null;
    }
  }

  /** A captured lock's policy judges the buffered records tagged with that lock's grants ({@link #recheck}). */
  public void addCaptured(String lock, SideEffectGate policy) {
    captured.putIfAbsent(lock, policy);
  }

  /** What decides outside every scope now. */
  private SideEffectGate outsideNow() {
    SideEffectGate l = led;
    return l != null ? l : outside;
  }

  /** The policy deciding the calling thread's side effects now. */
  private SideEffectGate gate() {
    Object carried = TokenContext.carried();
    return carried instanceof LockScope ? ((LockScope) carried).gate() : outsideNow();
  }

  @Override
  public Decision decide(Channel channel, boolean write, boolean fenced) {
    return gate().decide(channel, write, fenced);
  }

  @Override
  public Decision checkNow(Channel channel, boolean fenced) {
    return gate().checkNow(channel, fenced);
  }

  /**
   * Buffered Kafka records are judged again by the lock they were tagged with (the producer's I/O thread is in no
   * scope): a section's or a captured lock's records leave only while that lock's grant they carry is still held.
   */
  @Override
  public Decision recheck(Channel channel, boolean fenced, Decision taggedWith, int count) {
    SideEffectGate g = null;
    if (taggedWith != null && taggedWith.isTag()) {
      g = byLock.get(taggedWith.lock());
      if (g == null && !captured.isEmpty()) {
        g = captured.get(taggedWith.lock());
      }
    }
    return (g != null ? g : outsideNow()).recheck(channel, fenced, taggedWith, count);
  }

  @Override
  public Decision current() {
    return gate().current();
  }

  @Override
  public Decision hookFailed(Channel channel, boolean write, Throwable error) {
    return gate().hookFailed(channel, write, error);
  }
}
