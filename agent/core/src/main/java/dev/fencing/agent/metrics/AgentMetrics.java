package dev.fencing.agent.metrics;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.policy.RejectionCounters;
import dev.fencing.agent.policy.SideEffectCounters;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LeasePhase;
import dev.fencing.agent.token.LossReason;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenView;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * The agent's metrics (DESIGN.md section 7) in a Micrometer Prometheus registry of its own (never the application's
 * global registry). Every series reads the token state or the counters when scraped; nothing is pushed from the hot
 * path. Every known label combination is registered up front, so it starts at 0.
 */
public final class AgentMetrics {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

  public AgentMetrics(TokenState state, SideEffectCounters sideEffects, RejectionCounters rejections) {
    String lock = state.lock();
    Gauge.builder("fencing.lease.held", state, s -> s.phase() == LeasePhase.HOLDING ? 1 : 0)
        .description("1 while this JVM holds a valid lease on the lock").tag("lock", lock).register(registry);
    Gauge.builder("fencing.lease.remaining", state, AgentMetrics::remainingSeconds)
        .description("Time left before the local lease deadline; 0 when not holding").baseUnit("seconds").tag("lock", lock)
        .register(registry);
    Gauge.builder("fencing.token", state, s -> token(s.view()))
        .description("Current (or last) fencing token; exact up to 2^53").tag("lock", lock).register(registry);
    Gauge.builder("fencing.token.headroom", state, s -> 1.0 - token(s.view()) / (double) s.tokenMax())
        .description("1 - token / fencing.token.max").baseUnit("ratio").tag("lock", lock).register(registry);
    FunctionCounter.builder("fencing.lease.acquisitions", state, TokenState::acquisitions)
        .description("Leases acquired").tag("lock", lock).register(registry);
    for (LossReason r : LossReason.values()) {
      FunctionCounter.builder("fencing.lease.losses", state, s -> s.losses(r))
          .description("Leases lost, by reason").tags("lock", lock, "reason", r.label()).register(registry);
    }
    FunctionCounter.builder("fencing.token.reuse", state, TokenState::reuseCount)
        .description("Grants whose token was not above the highest seen, or came from another etcd cluster")
        .tag("lock", lock).register(registry);
    FunctionCounter.builder("fencing.token.overflow", state, TokenState::overflowCount)
        .description("Grants whose token was above fencing.token.max").tag("lock", lock).register(registry);
    for (Channel c : Channel.values()) {
      for (boolean fenced : new boolean[] {false, true}) {
        for (SideEffectCounters.Outcome o : SideEffectCounters.Outcome.values()) {
          FunctionCounter.builder("fencing.side.effects", sideEffects, x -> x.count(c, fenced, o))
              .description("Side effects seen by the hooks, by channel, destination and outcome")
              .tags("lock", lock, "channel", c.label(), "fenced", Boolean.toString(fenced), "outcome", o.label())
              .register(registry);
        }
      }
    }
    registerRejections(registry, lock, rejections);
  }

  static void registerRejections(PrometheusMeterRegistry registry, String lock, RejectionCounters rejections) {
    for (Channel c : Channel.values()) {
      for (RejectionCounters.Reason r : RejectionCounters.Reason.values()) {
        FunctionCounter.builder("fencing.rejections", rejections, x -> x.count(c, r))
            .description("Side effects of this JVM rejected by fences (stale or missing token), as the agent saw them")
            .tags("lock", lock, "channel", c.label(), "reason", r.label()).register(registry);
      }
    }
  }

  static double remainingSeconds(TokenState s) {
    TokenView v = s.view();
    long now = s.now();
    if (v.phaseAt(now) != LeasePhase.HOLDING) {
      return 0;
    }
    return Math.max(0, v.grant().deadlineNanos() - now) / 1e9;
  }

  private static double token(TokenView v) {
    Grant g = v.grant();
    return g == null ? 0 : g.token();
  }

  /** The Prometheus text exposition. */
  public String scrape() {
    return registry.scrape();
  }
}
