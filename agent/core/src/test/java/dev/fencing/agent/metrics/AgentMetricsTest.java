package dev.fencing.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.instrumentation.api.SideEffectEvents;
import dev.fencing.agent.policy.SideEffectPolicy;
import dev.fencing.agent.status.BuildInfo;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenStateFixtures;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The Prometheus exposition: the names of docs/DESIGN.md section 7, every known label combination from the start. */
class AgentMetricsTest {
  private final TokenState state = TokenStateFixtures.onClock("ledger", 1000, () -> 5_000_000_000L);
  private final RejectionCounters rejections = new RejectionCounters();
  private final SideEffectCounters counters = new SideEffectCounters();
  private final CoordinatorLatency latency = new CoordinatorLatency("ledger");
  private final AgentMetrics metrics = new AgentMetrics(FencingSeries.of(state, counters, rejections,
      new BuildInfo("1.2.3", "17.0.9+9", "etcd"), true), latency);

  private List<String> samples(String name) {
    return metrics.scrape().lines().filter(l -> l.startsWith(name + "{")).toList();
  }

  @Test
  void exposesTheSeriesOfTheDesignUnderTheirPrometheusNames() {
    Set<String> names = metrics.scrape().lines().filter(l -> l.startsWith("# TYPE "))
        .map(l -> l.split(" ")[2] + " " + l.split(" ")[3]).collect(Collectors.toCollection(TreeSet::new));
    assertThat(names).containsExactlyInAnyOrder(
        "fencing_lease_held gauge", "fencing_lease_remaining_seconds gauge", "fencing_token gauge",
        "fencing_token_headroom_ratio gauge", "fencing_lease_acquisitions_total counter",
        "fencing_lease_losses_total counter", "fencing_side_effects_total counter", "fencing_rejections_total counter",
        "fencing_token_reuse_total counter", "fencing_token_overflow_total counter",
        "fencing_hook_failures_total counter", "fencing_agent_state gauge", "fencing_build_info gauge",
        "fencing_coordinator_request_duration_seconds histogram", "fencing_side_effects_blocked_total counter");
    for (FencingSeries.Series s : metrics.series()) {
      assertThat(samples(s.prometheusName())).as(s.prometheusName()).hasSize(s.points().size());
    }
  }

  @Test
  void everyKnownLabelCombinationStartsAtZero() {
    List<String> effects = samples("fencing_side_effects_total");
    assertThat(effects).hasSize(Channel.values().length * 2 * SideEffectCounters.Outcome.values().length)
        .allMatch(l -> l.endsWith(" 0.0"));
    List<String> blocked = samples("fencing_side_effects_blocked_total");
    // blocked and would_block, once per block reason
    assertThat(blocked).hasSize(Channel.values().length * 2 * 2 * BlockReason.values().length)
        .allMatch(l -> l.endsWith(" 0.0"));
    for (String channel : List.of("jdbc", "http", "kafka")) {
      for (String fenced : List.of("true", "false")) {
        for (String outcome : List.of("tagged", "blocked")) {
          assertThat(effects).contains("fencing_side_effects_total{channel=\"" + channel + "\",fenced=\"" + fenced
              + "\",lock=\"ledger\",outcome=\"" + outcome + "\"} 0.0");
        }
        for (BlockReason r : BlockReason.values()) {
          for (String outcome : List.of("blocked", "would_block")) {
            assertThat(blocked).contains("fencing_side_effects_blocked_total{channel=\"" + channel + "\",fenced=\""
                + fenced + "\",lock=\"ledger\",outcome=\"" + outcome + "\",reason=\"" + r.label() + "\"} 0.0");
          }
        }
      }
      for (String reason : List.of("stale_token", "missing_token", "replayed_token")) {
        assertThat(samples("fencing_rejections_total")).contains("fencing_rejections_total{channel=\"" + channel
            + "\",lock=\"ledger\",reason=\"" + reason + "\"} 0.0");
      }
    }
    assertThat(samples("fencing_rejections_total")).hasSize(9);
    assertThat(samples("fencing_lease_losses_total")).containsExactlyInAnyOrder(
        "fencing_lease_losses_total{lock=\"ledger\",reason=\"keepalive_failed\"} 0.0",
        "fencing_lease_losses_total{lock=\"ledger\",reason=\"lease_revoked\"} 0.0",
        "fencing_lease_losses_total{lock=\"ledger\",reason=\"key_deleted\"} 0.0",
        "fencing_lease_losses_total{lock=\"ledger\",reason=\"deadline_passed\"} 0.0");
    assertThat(metrics.scrape()).contains("fencing_lease_held{lock=\"ledger\"} 0.0", "fencing_token{lock=\"ledger\"} 0.0",
        "fencing_token_headroom_ratio{lock=\"ledger\"} 1.0", "fencing_lease_remaining_seconds{lock=\"ledger\"} 0.0");
  }

  @Test
  void valuesAreReadAtScrapeTime() {
    state.granted(250, 1, 1, 5_000_000_000L + 3_500_000_000L);
    rejections.record(Channel.HTTP, RejectionCounters.Reason.STALE_TOKEN);
    assertThat(metrics.scrape()).contains("fencing_lease_held{lock=\"ledger\"} 1.0",
        "fencing_token{lock=\"ledger\"} 250.0", "fencing_token_headroom_ratio{lock=\"ledger\"} 0.75",
        "fencing_lease_remaining_seconds{lock=\"ledger\"} 3.5", "fencing_lease_acquisitions_total{lock=\"ledger\"} 1.0",
        "fencing_rejections_total{channel=\"http\",lock=\"ledger\",reason=\"stale_token\"} 1.0");
  }

  @Test
  void theAgentStateIsOneHotOverEveryStateFromTheStart() {
    assertThat(samples("fencing_agent_state")).containsExactlyInAnyOrder(
        "fencing_agent_state{lock=\"ledger\",state=\"starting\"} 1.0",
        "fencing_agent_state{lock=\"ledger\",state=\"standby\"} 0.0",
        "fencing_agent_state{lock=\"ledger\",state=\"holding\"} 0.0",
        "fencing_agent_state{lock=\"ledger\",state=\"expired\"} 0.0",
        "fencing_agent_state{lock=\"ledger\",state=\"lost\"} 0.0",
        "fencing_agent_state{lock=\"ledger\",state=\"failed\"} 0.0",
        "fencing_agent_state{lock=\"ledger\",state=\"no_lease\"} 0.0");
    state.failed("invalid configuration: fencing.lease.ttl='banana'");
    assertThat(samples("fencing_agent_state")).filteredOn(l -> l.endsWith(" 1.0"))
        .containsExactly("fencing_agent_state{lock=\"ledger\",state=\"failed\"} 1.0");
    state.granted(7, 1, 1, 5_000_000_000L + 3_000_000_000L);
    assertThat(samples("fencing_agent_state")).filteredOn(l -> l.endsWith(" 1.0"))
        .containsExactly("fencing_agent_state{lock=\"ledger\",state=\"holding\"} 1.0");
    AgentMetrics noLease = new AgentMetrics(FencingSeries.of(state, counters, rejections, BuildInfo.current("etcd"), false));
    assertThat(noLease.scrape().lines().filter(l -> l.startsWith("fencing_agent_state{") && l.endsWith(" 1.0")))
        .containsExactly("fencing_agent_state{lock=\"ledger\",state=\"no_lease\"} 1.0");
  }

  @Test
  void buildInfoIsOneWithTheVersionJavaAndCoordinator() {
    assertThat(samples("fencing_build_info")).containsExactly(
        "fencing_build_info{coordinator=\"etcd\",java=\"17.0.9+9\",lock=\"ledger\",version=\"1.2.3\"} 1");
    // The build wrote the project's version into build.properties (resource filtering): never "unknown" here.
    assertThat(BuildInfo.agentVersion()).matches("\\d+\\.\\d+\\.\\d+.*");
    assertThat(BuildInfo.current("etcd").describe())
        .isEqualTo("fencing-agent " + BuildInfo.agentVersion() + " (java " + Runtime.version() + ", coordinator etcd)");
  }

  @Test
  void blockedSideEffectsCarryTheirReason() {
    Properties none = new Properties();
    SideEffectPolicy policy = new SideEffectPolicy(ConfigLoader.load("lock=ledger", none, Map.of()), state, counters,
        SideEffectEvents.NONE);
    Decision standby = policy.decide(Channel.HTTP, true, false); // not holding yet: blocked as standby
    assertThat(standby.reason()).isEqualTo(BlockReason.STANDBY);
    state.failed("invalid configuration");
    policy.decide(Channel.JDBC, true, true);
    policy.decide(Channel.JDBC, true, true);
    String b = "fencing_side_effects_blocked_total";
    assertThat(metrics.scrape()).contains(
        b + "{channel=\"http\",fenced=\"false\",lock=\"ledger\",outcome=\"blocked\",reason=\"standby\"} 1.0",
        b + "{channel=\"jdbc\",fenced=\"true\",lock=\"ledger\",outcome=\"blocked\",reason=\"agent_failed\"} 2.0",
        b + "{channel=\"jdbc\",fenced=\"true\",lock=\"ledger\",outcome=\"blocked\",reason=\"standby\"} 0.0",
        // the totals without the reason are unchanged: the same side effects, counted once there
        "fencing_side_effects_total{channel=\"jdbc\",fenced=\"true\",lock=\"ledger\",outcome=\"blocked\"} 2.0");
    assertThat(counters.count(Channel.JDBC, true, SideEffectCounters.Outcome.BLOCKED)).isEqualTo(2);
  }

  @Test
  void coordinatorLatencyIsAHistogramInSecondsByOperation() {
    latency.record(CoordinatorLatency.Op.GRANT, 3_000_000);        // 3 ms
    latency.record(CoordinatorLatency.Op.KEEPALIVE, 200_000_000);  // 200 ms
    latency.record(CoordinatorLatency.Op.KEEPALIVE, 40_000_000);   // 40 ms
    latency.record(CoordinatorLatency.Op.CAMPAIGN, 60_000_000_000L); // a minute waiting for the holder: +Inf only
    String text = metrics.scrape();
    String n = "fencing_coordinator_request_duration_seconds";
    assertThat(text).contains(
        n + "_bucket{lock=\"ledger\",op=\"grant\",le=\"0.005\"} 1",
        n + "_bucket{lock=\"ledger\",op=\"keepalive\",le=\"0.025\"} 0",
        n + "_bucket{lock=\"ledger\",op=\"keepalive\",le=\"0.05\"} 1",
        n + "_bucket{lock=\"ledger\",op=\"keepalive\",le=\"0.25\"} 2",
        n + "_bucket{lock=\"ledger\",op=\"keepalive\",le=\"+Inf\"} 2",
        n + "_count{lock=\"ledger\",op=\"keepalive\"} 2",
        n + "_sum{lock=\"ledger\",op=\"keepalive\"} 0.24",
        n + "_bucket{lock=\"ledger\",op=\"campaign\",le=\"10.0\"} 0",
        n + "_bucket{lock=\"ledger\",op=\"campaign\",le=\"+Inf\"} 1");
  }

  @Test
  void otlpNamesAndUnitsMapToTheSamePrometheusNames() {
    for (FencingSeries.Series s : metrics.series()) {
      assertThat(s.otlpName()).doesNotEndWith("_total");
      // Prometheus' OTLP translation: counters get _total; unit "s" -> _seconds, "1" on a gauge -> _ratio (kept once).
      assertThat(s.prometheusName()).isEqualTo(s.otlpName() + (s.kind() == FencingSeries.Kind.COUNTER ? "_total" : ""));
    }
    assertThat(metrics.series()).filteredOn(s -> !s.otlpUnit().isEmpty())
        .extracting(s -> s.otlpName() + " " + s.otlpUnit())
        .containsExactlyInAnyOrder("fencing_lease_remaining_seconds s", "fencing_token_headroom_ratio 1");
  }
}
