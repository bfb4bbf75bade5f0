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
    number(sb, "token", token(g));
    number(sb, "highestSeenToken", state.highestSeen());
    number(sb, "leaseRemainingMs", remainingMs(phase, g, now));
    field(sb, "holderId", config.holderId());
    field(sb, "etcdClusterId", g == null || g.clusterId() == 0 ? null : Long.toHexString(g.clusterId()));
    field(sb, "leaseId", leaseId(g));
    field(sb, "lastLossReason", lastLoss(v));
    bool(sb, "tokenReused", g != null && g.reused());
    bool(sb, "tokenOverflow", g != null && g.overflow());
    number(sb, "tokenMax", state.tokenMax());
    number(sb, "tokenReuseTotal", state.reuseCount());
    number(sb, "tokenOverflowTotal", state.overflowCount());
    number(sb, "acquisitionsTotal", state.acquisitions());
    field(sb, "mode", config.display(dev.fencing.agent.config.ConfigKey.MODE));
    field(sb, "failMode", config.display(dev.fencing.agent.config.ConfigKey.FAIL_MODE));
    field(sb, "detail", v.detail());
    strings(sb, "configProblems", config.problems());
    strings(sb, "configWarnings", config.warnings());
    // Class loaders whose classes the agent left unchanged (they cannot see its bootstrap part): a fencing gap.
    strings(sb, "unfencedClassLoaders", dev.fencing.agent.instrumentation.BootstrapVisibility.unfencedLoaders());
    number(sb, "unfencedClassLoadersTotal", dev.fencing.agent.instrumentation.BootstrapVisibility.unfencedLoaderCount());
    sb.append("\"premainMicros\":").append(premainNanos / 1000);
    if (scopes != null) {
      locks(sb, scopes, state, v, now);
      captured(sb, scopes.captured());
      InventoryJson.append(sb, scopes.inventory(), config.display(dev.fencing.agent.config.ConfigKey.MODE));
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
      number(sb, "token", token(g));
      number(sb, "highestSeenToken", st.highestSeen());
      field(sb, "leaseId", leaseId(g));
      number(sb, "leaseRemainingMs", remainingMs(phase, g, now));
      field(sb, "lastLossReason", lastLoss(v));
      bool(sb, "tokenReused", g != null && g.reused());
      bool(sb, "tokenOverflow", g != null && g.overflow());
      number(sb, "acquisitionsTotal", st.acquisitions());
      number(sb, "sectionSkippedTotal", r.skippedCount());
      field(sb, "detail", v.detail());
      sb.append("\"sections\":[");
      for (int i = 0; i < r.sections().size(); i++) {
        dev.fencing.agent.instrumentation.api.SectionSpec s = r.sections().get(i);
        sb.append(i == 0 ? "" : ",").append('{');
        field(sb, "section", s.className() + "#" + s.method());
        sb.append("\"status\":");
        string(sb, dev.fencing.agent.instrumentation.api.SectionLoading.status(s));
        sb.append('}');
      }
      sb.append("]}");
    }
    sb.append(']');
  }

  /**
   * {@code "captured":[{...}, ...]}: each application-owned lock the agent captured (Curator, jetcd, Redisson), with
   * the state of its last acquisition: HOLDING while the application holds it and its session is trusted, EXPIRED
   * when the deadline passed inside the critical section, LOST once released or when the session ended; and whether
   * its coordinator issues tokens linearizably ({@code linearizable}: false for Redis).
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
      number(sb, "token", token(g));
      field(sb, "leaseId", leaseId(g));
      number(sb, "leaseRemainingMs", remainingMs(phase, g, now));
      number(sb, "acquisitionsTotal", st.acquisitions());
      sb.append("\"tokenReused\":").append(g != null && g.reused());
      sb.append(",\"linearizable\":").append(c.linearizable());
      sb.append(",\"coordinator\":");
      string(sb, c.where());
      sb.append('}');
    }
    sb.append(']');
  }

  private static long token(Grant g) {
    return g == null ? 0 : g.token();
  }

  private static String leaseId(Grant g) {
    return g == null ? null : Long.toHexString(g.leaseId());
  }

  private static String lastLoss(TokenView v) {
    return v.lastLoss() == null ? null : v.lastLoss().label();
  }

  /** Milliseconds left of a held grant at {@code now}; 0 when not holding. */
  private static long remainingMs(LeasePhase phase, Grant g, long now) {
    return phase == LeasePhase.HOLDING ? Math.max(0, (g.deadlineNanos() - now) / 1_000_000) : 0;
  }

  private static void number(StringBuilder sb, String name, long value) {
    sb.append('"').append(name).append("\":").append(value).append(',');
  }

  private static void bool(StringBuilder sb, String name, boolean value) {
    sb.append('"').append(name).append("\":").append(value).append(',');
  }

  private static void strings(StringBuilder sb, String name, java.util.List<String> values) {
    sb.append('"').append(name).append("\":[");
    for (int i = 0; i < values.size(); i++) {
      sb.append(i == 0 ? "" : ",");
      string(sb, values.get(i));
    }
    sb.append("],");
  }

  private static void field(StringBuilder sb, String name, String value) {
    sb.append('"').append(name).append("\":");
    string(sb, value);
    sb.append(',');
  }

  /** Writes {@code s} as a JSON string literal ({@code null} as null). */
  public static void string(StringBuilder sb, String s) {
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
