package dev.fencing.agent.instrumentation.api;

import java.lang.instrument.Instrumentation;

/**
 * What an instrumentation module's hook may use of the agent: configuration, rejection counters, the side-effect
 * counters (for side effects a hook passes as exempt without asking the policy), Instrumentation.
 */
public final class AgentContext {
  private final InstrumentationConfig config;
  private final RejectionCounters rejections;
  private final Instrumentation instrumentation;
  private final SideEffectCounters sideEffects;

  public AgentContext(InstrumentationConfig config, RejectionCounters rejections, Instrumentation instrumentation) {
    this(config, rejections, new SideEffectCounters(), instrumentation);
  }

  public AgentContext(InstrumentationConfig config, RejectionCounters rejections, SideEffectCounters sideEffects,
      Instrumentation instrumentation) {
    this.config = config;
    this.rejections = rejections;
    this.sideEffects = sideEffects;
    this.instrumentation = instrumentation;
  }

  /** The counters behind fencing_side_effects_total: a hook counts there what it passes as exempt. */
  public SideEffectCounters sideEffects() {
    return sideEffects;
  }

  /** For modules that must let a JDK module read the bootstrap part (advice inlined into java.net.http). */
  public Instrumentation instrumentation() {
    return instrumentation;
  }

  public InstrumentationConfig config() {
    return config;
  }

  public RejectionCounters rejections() {
    return rejections;
  }
}
