package dev.fencing.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.policy.RejectionCounters;
import dev.fencing.agent.policy.SideEffectCounters;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenStateFixtures;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The Prometheus exposition: the names of docs/DESIGN.md section 7, every known label combination from the start. */
class AgentMetricsTest {
  private final TokenState state = TokenStateFixtures.onClock("ledger", 1000, () -> 5_000_000_000L);
  private final RejectionCounters rejections = new RejectionCounters();
  private final AgentMetrics metrics = new AgentMetrics(FencingSeries.of(state, new SideEffectCounters(), rejections));

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
        "fencing_hook_failures_total counter");
    for (FencingSeries.Series s : metrics.series()) {
      assertThat(samples(s.prometheusName())).as(s.prometheusName()).hasSize(s.points().size());
    }
  }

  @Test
  void everyKnownLabelCombinationStartsAtZero() {
    List<String> effects = samples("fencing_side_effects_total");
    assertThat(effects).hasSize(Channel.values().length * 2 * SideEffectCounters.Outcome.values().length)
        .allMatch(l -> l.endsWith(" 0.0"));
    for (String channel : List.of("jdbc", "http", "kafka")) {
      for (String fenced : List.of("true", "false")) {
        for (String outcome : List.of("tagged", "blocked")) {
          assertThat(effects).contains("fencing_side_effects_total{channel=\"" + channel + "\",fenced=\"" + fenced
              + "\",lock=\"ledger\",outcome=\"" + outcome + "\"} 0.0");
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
