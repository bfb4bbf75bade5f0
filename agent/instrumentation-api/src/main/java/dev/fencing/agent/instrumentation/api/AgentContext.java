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
  private final DestinationInventory inventory;

  public AgentContext(InstrumentationConfig config, RejectionCounters rejections, Instrumentation instrumentation) {
    this(config, rejections, new SideEffectCounters(), instrumentation);
  }

  public AgentContext(InstrumentationConfig config, RejectionCounters rejections, SideEffectCounters sideEffects,
      Instrumentation instrumentation) {
    this(config, rejections, sideEffects, new DestinationInventory(), instrumentation);
  }

  public AgentContext(InstrumentationConfig config, RejectionCounters rejections, SideEffectCounters sideEffects,
      DestinationInventory inventory, Instrumentation instrumentation) {
    this.inventory = inventory;
    this.config = config;
    this.rejections = rejections;
    this.sideEffects = sideEffects;
    this.instrumentation = instrumentation;
  }

  /** The counters behind fencing_side_effects_total: a hook counts there what it passes as exempt. */
  public SideEffectCounters sideEffects() {
    return sideEffects;
  }

  /** Where the hooks note each destination their side effects go to (/status inventory, fencing_destinations). */
  public DestinationInventory inventory() {
    return inventory;
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
