package dev.fencing.agent.instrumentation.api;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;

/** What the policy and the rejection counters report beyond counting (implemented by the agent's event log). */
public interface SideEffectEvents {
  /** A side effect was blocked, or observe mode let through one it would have blocked ({@link Decision#observed()}). */
  void blocked(Channel channel, boolean fenced, Decision decision);

  /** A fence rejected a side effect of this JVM. */
  void rejected(Channel channel, RejectionCounters.Reason reason);

  /** A hook failed for one call; {@code decision} is what fail-mode made of it. */
  default void hookFailed(Channel channel, Throwable error, Decision decision) {}

  SideEffectEvents NONE = new SideEffectEvents() {
    @Override
    public void blocked(Channel channel, boolean fenced, Decision decision) {}

    @Override
    public void rejected(Channel channel, RejectionCounters.Reason reason) {}
  };
}
