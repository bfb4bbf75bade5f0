package dev.fencing.agent.instrumentation;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.policy.RejectionCounters;

/** What an instrumentation module's hook may use of the agent: configuration and the rejection counters. */
public final class AgentContext {
  private final AgentConfig config;
  private final RejectionCounters rejections;

  public AgentContext(AgentConfig config, RejectionCounters rejections) {
    this.config = config;
    this.rejections = rejections;
  }

  public AgentConfig config() {
    return config;
  }

  public RejectionCounters rejections() {
    return rejections;
  }
}
