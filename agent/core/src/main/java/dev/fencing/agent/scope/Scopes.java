package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.LockScope;
import dev.fencing.agent.bootstrap.SideEffectGate;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.instrumentation.api.SectionSpec;
import dev.fencing.agent.events.FencingEvents;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.policy.SideEffectPolicy;
import dev.fencing.agent.token.HighestTokenStore;
import dev.fencing.agent.token.TokenState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The locks of this JVM (docs/DESIGN.md section 4, "Lock scopes"), built once from the configuration in premain:
 * the JVM-wide lock ({@code fencing.lock}) and one lock per distinct name in {@code fencing.sections}, each with its own
 * token state and policy; and what decides side effects outside every scope: the JVM-wide lock when set, else a policy
 * that carries inbound tokens and passes the rest ({@code lock="none"}).
 */
public final class Scopes {
  private final List<LockRuntime> locks;
  private final LockRuntime outside;
  private final SideEffectGate gate;
  private final RejectionCounters rejections;
  private final Map<String, LockScope> sections;
  private final CapturedLocks captured;
  /** Every destination the JVM's side effects went to, per lock (/status inventory, fencing_destinations). */
  private final dev.fencing.agent.instrumentation.api.DestinationInventory inventory;

  private Scopes(AgentConfig config, List<LockRuntime> locks, LockRuntime outside, SideEffectGate gate,
      RejectionCounters rejections, Map<String, LockScope> sections) {
    this.inventory = new dev.fencing.agent.instrumentation.api.DestinationInventory(
        config.inventoryMaxDestinations());
    this.locks = List.copyOf(locks);
    this.outside = outside;
    this.gate = gate;
    this.rejections = rejections;
    this.sections = Map.copyOf(sections);
    this.captured = new CapturedLocks(config, this);
  }

  public static Scopes of(AgentConfig config) {
    boolean observe = config.mode() == AgentConfig.Mode.OBSERVE;
    Map<String, List<SectionSpec>> sectionsByLock = new LinkedHashMap<>();
    for (SectionSpec s : config.sections()) {
      sectionsByLock.computeIfAbsent(s.lock(), k -> new ArrayList<>()).add(s);
    }
    // Outside every section: the JVM-wide lock decides when there is one. So does a lease-style policy for an invalid
    // configuration that campaigns (it is FAILED, and fail-mode decides: the agent fails closed, as with one lock).
    boolean outsideIsLease = config.leaseEnabled()
        && (config.jvmWideLock() || config.sections().isEmpty() && !config.sectionsAnnotated()
            && !config.shedLockEnabled() && config.quartzJobs().isEmpty() || !config.valid());
    List<LockRuntime> locks = new ArrayList<>();
    LockRuntime outside;
    if (outsideIsLease) {
      String name = config.lock();
      outside = runtime(config, name, true, true, sectionsByLock.getOrDefault(name, List.of()), observe, false);
      locks.add(outside);
    } else {
      outside = runtime(config, "none", false, false, List.of(), observe, true);
    }
    if (config.leaseEnabled()) {
      for (Map.Entry<String, List<SectionSpec>> e : sectionsByLock.entrySet()) {
        if (!e.getKey().equals(outside.lock())) {
          locks.add(runtime(config, e.getKey(), true, false, e.getValue(), observe, false));
        }
      }
    }
    List<String> labels = new ArrayList<>();
    List<FencingEvents> events = new ArrayList<>();
    labels.add(outside.lock());
    events.add(outside.events());
    for (LockRuntime r : locks) {
      if (r != outside) {
        labels.add(r.lock());
        events.add(r.events());
      }
    }
    RejectionCounters rejections = new RejectionCounters(labels, events);
    Map<String, LockScope> sections = new HashMap<>();
    Map<String, SideEffectGate> byLock = new HashMap<>();
    for (LockRuntime r : locks) {
      byLock.put(r.lock(), r.policy());
      for (SectionSpec s : r.sections()) {
        sections.put(s.origin(), r.scope());
      }
    }
    // Without sections the JVM-wide policy (or the no-lease one) is the gate itself: the hot path stays as it was.
    SideEffectGate gate = sections.isEmpty() ? outside.policy() : new ScopedGate(outside.policy(), byLock);
    return new Scopes(config, locks, outside, gate, rejections, sections);
  }

  private static LockRuntime runtime(AgentConfig config, String lock, boolean campaigns, boolean jvmWide,
      List<SectionSpec> sections, boolean observe, boolean outsideEveryScope) {
    TokenState state = new TokenState(lock, config.tokenMax(),
        campaigns ? HighestTokenStore.in(config.stateDir(), lock) : HighestTokenStore.none(), config.signingKey());
    SideEffectCounters counters = new SideEffectCounters();
    FencingEvents events = new FencingEvents(lock, config.logEventInterval());
    SideEffectPolicy policy = outsideEveryScope ? SideEffectPolicy.outsideEveryScope(config, state, counters, events)
        : new SideEffectPolicy(config, state, counters, events);
    return new LockRuntime(lock, state, counters, events, policy, campaigns && config.leaseEnabled(), jvmWide, sections,
        observe);
  }

  /** What the bootstrap bridge asks ({@code Fencing.install}). */
  public SideEffectGate gate() {
    return gate;
  }

  /** The section table for {@code Sections.install}: {@code <class>.<method>} to its lock's scope. */
  public Map<String, LockScope> sectionTable() {
    return sections;
  }

  /** The locks this JVM campaigns for (may be empty), the JVM-wide lock first. */
  public List<LockRuntime> locks() {
    return locks;
  }

  /** What decides side effects outside every section: the JVM-wide lock, or "none". */
  public LockRuntime outside() {
    return outside;
  }

  /** Every runtime, "outside" first, each once: the lock labels of the metrics. */
  public List<LockRuntime> all() {
    List<LockRuntime> all = new ArrayList<>();
    all.add(outside);
    for (LockRuntime r : locks) {
      if (r != outside) {
        all.add(r);
      }
    }
    return all;
  }

  /** The application's own locks captured so far (Curator, jetcd): the hook their advice reports to. */
  public CapturedLocks captured() {
    return captured;
  }

  public RejectionCounters rejections() {
    return rejections;
  }

  public dev.fencing.agent.instrumentation.api.DestinationInventory inventory() {
    return inventory;
  }

  /** Marks every lock's state FAILED (invalid configuration, failed start). */
  public void failed(String detail) {
    for (LockRuntime r : all()) {
      r.state().failed(detail);
    }
  }
}
