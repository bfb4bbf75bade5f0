package dev.fencing.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Counters from Prometheus text: selection by labels and the changes between two scrapes. */
class MetricsSnapshotTest {
  private static final String BEFORE = String.join("\n",
      "# TYPE fencing_side_effects_total counter",
      "fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"ledger\",outcome=\"blocked\"} 0.0",
      "fencing_side_effects_total{channel=\"http\",fenced=\"true\",lock=\"ledger\",outcome=\"blocked\"} 2.0",
      "fencing_lease_held{lock=\"ledger\"} 1.0",
      "fencing_rejections_total{channel=\"jdbc\",lock=\"ledger\",reason=\"stale_token\"} 0.0");
  private static final String AFTER = BEFORE.replace("outcome=\"blocked\"} 0.0", "outcome=\"blocked\"} 7.0")
      .replace("fencing_lease_held{lock=\"ledger\"} 1.0", "fencing_lease_held{lock=\"ledger\"} 0.0");

  @Test
  void sumsTheSeriesWhoseLabelsMatch() {
    MetricsSnapshot s = snapshot(AFTER);
    assertThat(s.value("w", "fencing_side_effects_total", "outcome", "blocked")).isEqualTo(9.0);
    assertThat(s.value("w", "fencing_side_effects_total", "fenced", "false", "outcome", "blocked")).isEqualTo(7.0);
    assertThat(s.value("w", "fencing_rejections_total", "channel", "http")).isZero();
    assertThat(s.value("other", "fencing_side_effects_total")).isZero();
  }

  @Test
  void reportsChangedCountersOnlyNotGauges() {
    List<MetricsSnapshot.Change> changes = snapshot(AFTER).changesSince(snapshot(BEFORE));
    assertThat(changes).containsExactly(new MetricsSnapshot.Change("w",
        "fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"ledger\",outcome=\"blocked\"}", 0, 7));
  }

  private static MetricsSnapshot snapshot(String text) {
    return MetricsSnapshot.scrape(List.of(new MetricsSnapshot.Source("w", () -> text)));
  }
}
