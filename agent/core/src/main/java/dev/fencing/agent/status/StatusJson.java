package dev.fencing.agent.status;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LeasePhase;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenView;

/** The body of GET /status (docs/DESIGN.md section 5), written by hand: no JSON library needed for a flat object. */
public final class StatusJson {
  private StatusJson() {}

  public static String render(TokenState state, AgentConfig config, long premainNanos) {
    return render(state, null, config, premainNanos);
  }

  /**
   * With the JVM's locks: the top-level fields describe the scope outside every section (the JVM-wide lock; without
   * one {@code lock} is "none" and {@code state} "NO_LEASE"), and {@code locks} lists every lock this JVM campaigns
   * for, with its sections.
   */
  public static String render(dev.fencing.agent.scope.Scopes scopes, AgentConfig config, long premainNanos) {
    return render(scopes.outside().state(), scopes, config, premainNanos);
  }

  private static String render(TokenState state, dev.fencing.agent.scope.Scopes scopes, AgentConfig config,
      long premainNanos) {
    TokenView v = state.view();
    long now = state.now();
    LeasePhase phase = v.phaseAt(now);
    Grant g = v.grant();
    StringBuilder sb = new StringBuilder(512).append('{');
    field(sb, "lock", state.lock());
    boolean outsideLease = scopes == null ? config.leaseEnabled() : scopes.outside().campaigns()
        || (config.leaseEnabled() && !config.valid());
    field(sb, "state", outsideLease ? phase.name() : "NO_LEASE");
    sb.append("\"token\":").append(g == null ? 0 : g.token()).append(',');
    sb.append("\"highestSeenToken\":").append(state.highestSeen()).append(',');
    sb.append("\"leaseRemainingMs\":").append(phase == LeasePhase.HOLDING ? Math.max(0, (g.deadlineNanos() - now) / 1_000_000) : 0).append(',');
    field(sb, "holderId", config.holderId());
    field(sb, "etcdClusterId", g == null || g.clusterId() == 0 ? null : Long.toHexString(g.clusterId()));
    field(sb, "leaseId", g == null ? null : Long.toHexString(g.leaseId()));
    field(sb, "lastLossReason", v.lastLoss() == null ? null : v.lastLoss().label());
    sb.append("\"tokenReused\":").append(g != null && g.reused()).append(',');
    sb.append("\"tokenOverflow\":").append(g != null && g.overflow()).append(',');
    sb.append("\"tokenMax\":").append(state.tokenMax()).append(',');
    sb.append("\"tokenReuseTotal\":").append(state.reuseCount()).append(',');
    sb.append("\"tokenOverflowTotal\":").append(state.overflowCount()).append(',');
    sb.append("\"acquisitionsTotal\":").append(state.acquisitions()).append(',');
    field(sb, "mode", config.display(dev.fencing.agent.config.ConfigKey.MODE));
    field(sb, "failMode", config.display(dev.fencing.agent.config.ConfigKey.FAIL_MODE));
    field(sb, "detail", v.detail());
    sb.append("\"configProblems\":[");
    for (int i = 0; i < config.problems().size(); i++) {
      sb.append(i == 0 ? "" : ",");
      string(sb, config.problems().get(i));
    }
    sb.append("],\"configWarnings\":[");
    for (int i = 0; i < config.warnings().size(); i++) {
      sb.append(i == 0 ? "" : ",");
      string(sb, config.warnings().get(i));
    }
    // Class loaders whose classes the agent left unchanged (they cannot see its bootstrap part): a fencing gap.
    java.util.List<String> unfenced = dev.fencing.agent.instrumentation.BootstrapVisibility.unfencedLoaders();
    sb.append("],\"unfencedClassLoaders\":[");
    for (int i = 0; i < unfenced.size(); i++) {
      sb.append(i == 0 ? "" : ",");
      string(sb, unfenced.get(i));
    }
    sb.append("],\"unfencedClassLoadersTotal\":").append(
        dev.fencing.agent.instrumentation.BootstrapVisibility.unfencedLoaderCount());
    sb.append(",\"premainMicros\":").append(premainNanos / 1000);
    if (scopes != null) {
      locks(sb, scopes, state, v, now);
      captured(sb, scopes.captured());
    }
    return sb.append('}').toString();
  }

  /**
   * {@code "locks":[{...}, ...]}: each lock this JVM campaigns for, and its sections. The lock the top-level fields
   * describe is rendered from the same snapshot ({@code outsideView} at {@code outsideNow}): read twice, a grant
   * landing in between would show HOLDING in the list beside a top-level token of 0 (a reader waiting for HOLDING
   * and then taking the top-level token would take the wrong one).
   */
  private static void locks(StringBuilder sb, dev.fencing.agent.scope.Scopes scopes, TokenState outside,
      TokenView outsideView, long outsideNow) {
    sb.append(",\"locks\":[");
    boolean first = true;
    for (dev.fencing.agent.scope.LockRuntime r : scopes.locks()) {
      sb.append(first ? "" : ",").append('{');
      first = false;
      TokenState st = r.state();
      TokenView v = st == outside ? outsideView : st.view();
      long now = st == outside ? outsideNow : st.now();
      LeasePhase phase = v.phaseAt(now);
      Grant g = v.grant();
      field(sb, "lock", r.lock());
      field(sb, "scope", r.jvmWide() ? (r.sections().isEmpty() ? "jvm" : "jvm+sections") : "sections");
      field(sb, "state", phase.name());
      sb.append("\"token\":").append(g == null ? 0 : g.token()).append(',');
      sb.append("\"highestSeenToken\":").append(st.highestSeen()).append(',');
      field(sb, "leaseId", g == null ? null : Long.toHexString(g.leaseId()));
      sb.append("\"leaseRemainingMs\":").append(phase == LeasePhase.HOLDING ? Math.max(0, (g.deadlineNanos() - now) / 1_000_000) : 0).append(',');
      field(sb, "lastLossReason", v.lastLoss() == null ? null : v.lastLoss().label());
      sb.append("\"tokenReused\":").append(g != null && g.reused()).append(',');
      sb.append("\"tokenOverflow\":").append(g != null && g.overflow()).append(',');
      sb.append("\"acquisitionsTotal\":").append(st.acquisitions()).append(',');
      sb.append("\"sectionSkippedTotal\":").append(r.skippedCount()).append(',');
      field(sb, "detail", v.detail());
      sb.append("\"sections\":[");
      for (int i = 0; i < r.sections().size(); i++) {
        dev.fencing.agent.config.SectionSpec s = r.sections().get(i);
        sb.append(i == 0 ? "" : ",").append('{');
        field(sb, "section", s.className() + "#" + s.method());
        sb.append("\"status\":");
        string(sb, dev.fencing.agent.scope.SectionLoading.status(s));
        sb.append('}');
      }
      sb.append("]}");
    }
    sb.append(']');
  }

  /**
   * {@code "captured":[{...}, ...]}: each application-owned lock the agent captured (Curator, jetcd), with the state
   * of its last acquisition: HOLDING while the application holds it and its session is trusted, EXPIRED when the
   * deadline passed inside the critical section, LOST once released or when the session ended.
   */
  private static void captured(StringBuilder sb, dev.fencing.agent.scope.CapturedLocks captured) {
    sb.append(",\"captured\":[");
    boolean first = true;
    for (dev.fencing.agent.scope.CapturedLocks.Captured c : captured.locks()) {
      sb.append(first ? "" : ",").append('{');
      first = false;
      TokenState st = c.runtime().state();
      TokenView v = st.view();
      long now = st.now();
      LeasePhase phase = v.phaseAt(now);
      Grant g = v.grant();
      field(sb, "lock", c.runtime().lock());
      field(sb, "library", c.library());
      field(sb, "path", c.path());
      field(sb, "state", phase.name());
      sb.append("\"token\":").append(g == null ? 0 : g.token()).append(',');
      sb.append("\"leaseRemainingMs\":").append(phase == LeasePhase.HOLDING ? Math.max(0, (g.deadlineNanos() - now) / 1_000_000) : 0).append(',');
      sb.append("\"acquisitionsTotal\":").append(st.acquisitions()).append(',');
      sb.append("\"tokenReused\":").append(g != null && g.reused());
      sb.append('}');
    }
    sb.append(']');
  }

  private static void field(StringBuilder sb, String name, String value) {
    sb.append('"').append(name).append("\":");
    string(sb, value);
    sb.append(',');
  }

  static void string(StringBuilder sb, String s) {
    if (s == null) {
      sb.append("null");
      return;
    }
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    sb.append('"');
  }
}
