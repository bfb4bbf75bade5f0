package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.LockScope;
import dev.fencing.agent.instrumentation.api.SectionSpec;
import dev.fencing.agent.events.FencingEvents;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.policy.SideEffectPolicy;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LeasePhase;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenView;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * One lock of this JVM and everything that is its own: token state (its key, its token, its highest-token file), side
 * effect counters, events, policy, the scope its sections run in, and the sections declared on it. The runtime of
 * "outside every scope" ({@code none}) is one too, with a policy that adopts inbound tokens and campaigns for nothing.
 */
public final class LockRuntime {
  private final String lock;
  private final TokenState state;
  private final SideEffectCounters counters;
  private final FencingEvents events;
  private final SideEffectPolicy policy;
  private final boolean campaigns;
  private final boolean jvmWide;
  private final List<SectionSpec> sections;
  private final LongAdder skipped = new LongAdder();
  private final Scope scope;

  LockRuntime(String lock, TokenState state, SideEffectCounters counters, FencingEvents events, SideEffectPolicy policy,
      boolean campaigns, boolean jvmWide, List<SectionSpec> sections, boolean observe) {
    this.lock = lock;
    this.state = state;
    this.counters = counters;
    this.events = events;
    this.policy = policy;
    this.campaigns = campaigns;
    this.jvmWide = jvmWide;
    this.sections = List.copyOf(sections);
    this.scope = new Scope(this, observe);
  }

  public String lock() {
    return lock;
  }

  public TokenState state() {
    return state;
  }

  public SideEffectCounters counters() {
    return counters;
  }

  public FencingEvents events() {
    return events;
  }

  public SideEffectPolicy policy() {
    return policy;
  }

  /** True for a lock this JVM campaigns for in etcd (the JVM-wide lock, a section's lock). */
  public boolean campaigns() {
    return campaigns;
  }

  /** True for fencing.lock: side effects outside sections are decided by it. */
  public boolean jvmWide() {
    return jvmWide;
  }

  /** The sections declared on this lock (empty for the JVM-wide lock without sections, and for "none"). */
  public List<SectionSpec> sections() {
    return sections;
  }

  /** The scope a section of this lock runs in (and hands off to its tasks). */
  public LockScope scope() {
    return scope;
  }

  /** Void sections skipped because this JVM did not hold the lock: fencing_section_skipped_total. */
  public long skippedCount() {
    return skipped.sum();
  }

  /** Holding a valid lease, its token neither reused nor overflowed: what lets a void section run. */
  public boolean holding() {
    TokenView v = state.view();
    Grant g = v.grant();
    return v.phaseAt(state.now()) == LeasePhase.HOLDING && g != null && !g.reused() && !g.overflow();
  }

  /** The bootstrap side of the lock's scope: allocated once, put on a thread as it is. */
  private static final class Scope extends LockScope {
    private final LockRuntime runtime;
    private final boolean observe;

    Scope(LockRuntime runtime, boolean observe) {
      super(runtime.lock, runtime.policy);
      this.runtime = runtime;
      this.observe = observe;
    }

    @Override
    public boolean runsVoid() {
      return observe || runtime.holding();
    }

    @Override
    public void skipped() {
      runtime.skipped.increment();
    }
  }
}
