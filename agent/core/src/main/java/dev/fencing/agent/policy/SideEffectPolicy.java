package dev.fencing.agent.policy;

import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.instrumentation.api.SideEffectEvents;
import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.ReentryGuard;
import dev.fencing.agent.bootstrap.SideEffectGate;
import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.exempt.CallerExemptions;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LeasePhase;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenView;

/**
 * The decision table of docs/DESIGN.md section 4: (token state, write?, fenced destination?) → tag, pass or block.
 *
 * <p>Decisions are prebuilt once per grant, so the hot path (holding, tagging) is a volatile read, a clock read, a
 * comparison and a counter increment: no lock, no allocation. Waiting for the lease ({@code fencing.standby=wait})
 * happens only on the path that would otherwise block.
 */
public final class SideEffectPolicy implements SideEffectGate {
  /** Decisions for one grant (or for "no grant yet"). */
  private static final class Decisions {
    final Grant grant;
    final Decision tag;
    final Decision pass;
    final Decision[] block = new Decision[BlockReason.values().length];
    final Decision[] observed = new Decision[BlockReason.values().length];

    Decisions(String lock, Grant grant) {
      this.grant = grant;
      long token = grant == null ? 0 : grant.token();
      String signature = grant == null ? null : grant.signature();
      String grantId = grant == null ? null : grant.id();
      this.tag = grant == null ? null : Decision.tag(lock, token, signature, grantId);
      this.pass = Decision.pass(lock);
      for (BlockReason r : BlockReason.values()) {
        block[r.ordinal()] = Decision.block(lock, token, r);
        observed[r.ordinal()] = Decision.observedBlock(lock, token, r, signature, grantId);
      }
    }
  }

  private final TokenState state;
  private final boolean observe;
  private final boolean failOpen;
  private final boolean expiredTag;
  private final boolean standbyWait;
  private final boolean noLease;
  private final long standbyTimeoutNanos;
  private final SideEffectCounters counters;
  private final SideEffectEvents events;
  /** fencing.exempt.callers and the built-in callers: asked only where a write would be blocked. */
  private final CallerExemptions exemptCallers;
  /** The pass of a caller-exempt write, one per rule of {@link #exemptCallers} (built once). */
  private final Decision[] exemptPasses;
  private volatile Decisions decisions;

  public SideEffectPolicy(AgentConfig config, TokenState state, SideEffectCounters counters, SideEffectEvents events) {
    this(state, counters, events, config.mode() == AgentConfig.Mode.OBSERVE,
        config.failMode() == AgentConfig.FailMode.OPEN, config.expiredFenced() == AgentConfig.ExpiredFenced.TAG,
        config.standby() == AgentConfig.Standby.WAIT, config.standbyTimeout().toNanos(), !config.leaseEnabled(),
        exemptCallers(config));
  }

  private static CallerExemptions exemptCallers(AgentConfig config) {
    return CallerExemptions.of(config.exemptCallers(), config.exemptBuiltin(), config.exemptPassThrough());
  }

  /**
   * The policy of side effects outside every lock's scope in a JVM without a JVM-wide lock (declared sections only, or
   * no lease at all): they carry an inbound token when there is one and pass untouched otherwise, counted under
   * {@code state}'s lock label ({@code none}).
   */
  public static SideEffectPolicy outsideEveryScope(AgentConfig config, TokenState state, SideEffectCounters counters,
      SideEffectEvents events) {
    return new SideEffectPolicy(state, counters, events, config.mode() == AgentConfig.Mode.OBSERVE,
        config.failMode() == AgentConfig.FailMode.OPEN, config.expiredFenced() == AgentConfig.ExpiredFenced.TAG,
        config.standby() == AgentConfig.Standby.WAIT, config.standbyTimeout().toNanos(), true);
  }

  /**
   * The policy of an application-owned lock the agent captured (Curator, jetcd): the lock's own decision table, also in
   * a JVM that campaigns for no lease of its own ({@code fencing.lease.enabled=false}); the thread is in the lock's
   * scope only while the application holds it, so "standby" means the lock's trust ended inside the critical section.
   */
  public static SideEffectPolicy capturedLock(AgentConfig config, TokenState state, SideEffectCounters counters,
      SideEffectEvents events) {
    return new SideEffectPolicy(state, counters, events, config.mode() == AgentConfig.Mode.OBSERVE,
        config.failMode() == AgentConfig.FailMode.OPEN, config.expiredFenced() == AgentConfig.ExpiredFenced.TAG,
        false, 0, false, exemptCallers(config));
  }

  SideEffectPolicy(TokenState state, SideEffectCounters counters, boolean observe, boolean failOpen, boolean expiredTag,
      boolean standbyWait, long standbyTimeoutNanos) {
    this(state, counters, SideEffectEvents.NONE, observe, failOpen, expiredTag, standbyWait, standbyTimeoutNanos, false);
  }

  SideEffectPolicy(TokenState state, SideEffectCounters counters, boolean observe, boolean failOpen, boolean expiredTag,
      boolean standbyWait, long standbyTimeoutNanos, boolean noLease) {
    this(state, counters, SideEffectEvents.NONE, observe, failOpen, expiredTag, standbyWait, standbyTimeoutNanos, noLease);
  }

  SideEffectPolicy(TokenState state, SideEffectCounters counters, SideEffectEvents events, boolean observe,
      boolean failOpen, boolean expiredTag, boolean standbyWait, long standbyTimeoutNanos, boolean noLease) {
    this(state, counters, events, observe, failOpen, expiredTag, standbyWait, standbyTimeoutNanos, noLease,
        new CallerExemptions(java.util.List.of()));
  }

  SideEffectPolicy(TokenState state, SideEffectCounters counters, SideEffectEvents events, boolean observe,
      boolean failOpen, boolean expiredTag, boolean standbyWait, long standbyTimeoutNanos, boolean noLease,
      CallerExemptions exemptCallers) {
    this.exemptCallers = exemptCallers;
    java.util.List<String> rules = exemptCallers.rules();
    this.exemptPasses = new Decision[rules.size()];
    for (int i = 0; i < exemptPasses.length; i++) {
      exemptPasses[i] = Decision.exemptCaller(state.lock(), rules.get(i));
    }
    this.noLease = noLease;
    this.state = state;
    this.counters = counters;
    this.events = events;
    this.observe = observe;
    this.failOpen = failOpen;
    this.expiredTag = expiredTag;
    this.standbyWait = standbyWait;
    this.standbyTimeoutNanos = standbyTimeoutNanos;
    this.decisions = new Decisions(state.lock(), null);
  }

  @Override
  public Decision checkNow(Channel channel, boolean fenced) {
    if (ReentryGuard.isAgentThread()) {
      return decisions.pass;
    }
    Decision inbound = inbound();
    if (inbound != null) {
      return inbound; // work done for an inbound token: its fence judges it, as when it was done
    }
    Decision d = evaluate(true, fenced);
    Decision exempt = d.reason() != null ? exemptCaller(channel, fenced) : null;
    if (exempt != null) {
      return exempt;
    }
    if (d.reason() != null) {
      counters.record(channel, fenced, d);
      events.blocked(channel, fenced, d);
    }
    return d;
  }

  @Override
  public Decision decide(Channel channel, boolean write, boolean fenced) {
    if (ReentryGuard.isAgentThread()) {
      return decisions.pass; // the agent's own traffic is never fenced, nor counted
    }
    Decision inbound = inbound();
    if (inbound != null) {
      // Work done for an inbound request or record carries the caller's token, valid or not: the caller's fence
      // (or the database's) judges it. Only in a JVM with no lease of its own (see inbound()).
      if (write) {
        counters.record(channel, fenced, inbound);
      }
      return inbound;
    }
    Decision d = evaluate(write, fenced);
    Decision exempt = d.reason() != null ? exemptCaller(channel, fenced) : null;
    if (exempt != null) {
      return exempt; // before waiting: a migration on a standby must not wait for a lease it does not need
    }
    if (d.isBlock() && standbyWait && waitable(d.reason()) && !NON_BLOCKING.get(Thread.currentThread().getClass())) {
      d = awaitLease(write, fenced, d);
    }
    if (write) {
      counters.record(channel, fenced, d);
    }
    if (d.reason() != null) {
      events.blocked(channel, fenced, d); // off the tagging path: only blocks and observe-mode would-blocks
    }
    return d;
  }

  @Override
  public Decision recheck(Channel channel, boolean fenced, Decision taggedWith, int count) {
    if (noLease) {
      return null; // nothing of its own was tagged, nothing to withdraw
    }
    Decision now = evaluate(true, fenced);
    Decision blocked;
    if (now.isBlock()) {
      blocked = now;
    } else if (now.reason() != null) {
      return null; // observe mode: enforce would hold them; observe lets them go, as at send()
    } else if (taggedWith != null && taggedWith.isTag() && now.isTag() && !sameGrant(now, taggedWith)) {
      // Held again, but under a later grant: records tagged under the earlier one must not land after writes a
      // successor may have made in between. Off the hot path: a batch at most once.
      if (observe) {
        return null;
      }
      blocked = Decision.block(taggedWith.lock(), taggedWith.token(), BlockReason.LOST);
    } else {
      return null;
    }
    if (count > 0) {
      for (int i = 0; i < count; i++) {
        counters.record(channel, fenced, blocked);
      }
      events.blocked(channel, fenced, blocked);
    }
    return blocked;
  }

  private static boolean sameGrant(Decision a, Decision b) {
    return a == b || (a.token() == b.token() && java.util.Objects.equals(a.grant(), b.grant())
        && a.lock().equals(b.lock()));
  }

  @Override
  public Decision hookFailed(Channel channel, boolean write, Throwable error) {
    counters.recordHookFailure(channel);
    Decision d;
    if (!write || noLease || ReentryGuard.isAgentThread()) {
      d = decisions.pass; // reads are never blocked; without a lease or on our own threads nothing would be
    } else {
      Decisions c = decisionsFor(state.view().grant());
      d = failOpen ? c.pass : block(c, BlockReason.HOOK_FAILED);
      counters.record(channel, false, d);
    }
    events.hookFailed(channel, error, d);
    return d;
  }

  @Override
  public Decision current() {
    if (ReentryGuard.isAgentThread()) {
      return null;
    }
    Decision inbound = inbound();
    return inbound != null ? inbound : evaluate(true, true);
  }

  /**
   * The token an inbound request or record brought, when this JVM adopts it: only with no lease of its own
   * (fencing.lease.enabled=false). A JVM that campaigns for a lock decides by its own lease, whatever a request claims:
   * a forged {@code Fencing-Token} must not turn a standby into a writer (anyone can send the header; only the
   * coordinator grants the lease).
   */
  private Decision inbound() {
    return noLease ? TokenContext.current() : null;
  }

  /**
   * Whether a write that would be blocked (or, in observe mode, would have been) comes from exempt code
   * (fencing.exempt.callers): then it passes untagged and is counted as exempt, and the pass names the rule that
   * matched (the readiness report counts it per destination). Null when not exempt. Off the tagging path: only a
   * decision with a block reason gets here, and only then is the stack walked.
   */
  private Decision exemptCaller(Channel channel, boolean fenced) {
    if (exemptCallers.none()) {
      return null;
    }
    int rule = exemptCallers.ruleOnStack();
    if (rule < 0) {
      return null;
    }
    counters.recordExempt(channel, fenced);
    return exemptPasses[rule];
  }

  /** The table itself, without waiting or counting. */
  Decision evaluate(boolean write, boolean fenced) {
    if (noLease) {
      return decisions.pass; // fencing.lease.enabled=false: nothing of its own to tag or block
    }
    TokenView v = state.view();
    LeasePhase phase = v.phaseAt(state.now());
    Decisions c = decisionsFor(v.grant());
    Grant g = c.grant;
    if (!write) {
      // Reads are never blocked; they carry the token only while it is valid.
      return phase == LeasePhase.HOLDING && !g.reused() && !g.overflow() ? c.tag : c.pass;
    }
    switch (phase) {
      case HOLDING:
        if (g.reused()) {
          return block(c, BlockReason.TOKEN_REUSED);
        }
        if (g.overflow()) {
          return block(c, BlockReason.TOKEN_OVERFLOW);
        }
        return c.tag;
      case EXPIRED:
      case LOST:
        if (g == null) {
          return block(c, BlockReason.LOST); // an acquisition that could not be verified: no token to carry
        }
        if (g.reused()) {
          return block(c, BlockReason.TOKEN_REUSED);
        }
        if (g.overflow()) {
          return block(c, BlockReason.TOKEN_OVERFLOW);
        }
        if (fenced && expiredTag) {
          return c.tag; // the fence rejects it if a successor has written
        }
        return block(c, phase == LeasePhase.EXPIRED ? BlockReason.EXPIRED : BlockReason.LOST);
      case FAILED:
        return failOpen ? c.pass : block(c, BlockReason.AGENT_FAILED);
      case STARTING:
      case STANDBY:
      default:
        return block(c, BlockReason.STANDBY);
    }
  }

  private Decision block(Decisions c, BlockReason reason) {
    return observe ? c.observed[reason.ordinal()] : c.block[reason.ordinal()];
  }

  private Decisions decisionsFor(Grant grant) {
    Decisions c = decisions;
    if (c.grant != grant) {
      c = new Decisions(state.lock(), grant); // once per grant
      decisions = c;
    }
    return c;
  }

  /**
   * Threads that must never block: those marked {@code reactor.core.scheduler.NonBlocking} (Reactor Netty's event
   * loops, where its HttpClient's attempts are decided, and Reactor's parallel scheduler). Waiting there for the lease
   * would stall every connection of the loop; the side effect is decided at once instead. By name, once per thread
   * class, off the tagging path (only a block that would wait asks).
   */
  private static final ClassValue<Boolean> NON_BLOCKING = new ClassValue<>() {
    @Override
    protected Boolean computeValue(Class<?> type) {
      for (Class<?> c = type; c != null; c = c.getSuperclass()) {
        if (marked(c)) {
          return true;
        }
      }
      return false;
    }

    private boolean marked(Class<?> c) {
      for (Class<?> i : c.getInterfaces()) {
        if (i.getName().equals("reactor.core.scheduler.NonBlocking") || marked(i)) {
          return true;
        }
      }
      return false;
    }
  };

  private static boolean waitable(BlockReason reason) {
    return reason == BlockReason.STANDBY || reason == BlockReason.EXPIRED || reason == BlockReason.LOST;
  }

  private Decision awaitLease(boolean write, boolean fenced, Decision blocked) {
    try {
      if (state.awaitHolding(standbyTimeoutNanos)) {
        return evaluate(write, fenced);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return blocked;
  }
}
