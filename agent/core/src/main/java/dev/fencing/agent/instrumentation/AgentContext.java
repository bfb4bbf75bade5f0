package dev.fencing.agent.instrumentation;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.policy.RejectionCounters;
import java.lang.instrument.Instrumentation;

/** What an instrumentation module's hook may use of the agent: configuration, rejection counters, Instrumentation. */
public final class AgentContext {
  private final AgentConfig config;
  private final RejectionCounters rejections;
  private final Instrumentation instrumentation;

  public AgentContext(AgentConfig config, RejectionCounters rejections, Instrumentation instrumentation) {
    this.config = config;
    this.rejections = rejections;
    this.instrumentation = instrumentation;
  }

  /** For modules that must let a JDK module read the bootstrap part (advice inlined into java.net.http). */
  public Instrumentation instrumentation() {
    return instrumentation;
  }

  public AgentConfig config() {
    return config;
  }

  public RejectionCounters rejections() {
    return rejections;
  }
}
