package dev.fencing.agent.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.metrics.AgentMetrics;
import dev.fencing.agent.metrics.FencingSeries;
import dev.fencing.outbox.OutboxRelay;
import dev.fencing.outbox.RelayMetrics;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The agent's exposition of a relay's metrics has the standalone relay's names, labels and types. */
class RelaySeriesTest {
  private static final Pattern SAMPLE = Pattern.compile("(?m)^(\\w+)\\{([^}]*)\\} \\S+$");

  private static RelayMetrics metrics() {
    return OutboxRelay.builder(() -> {
      throw new SQLException("not started");
    }, "shop.outbox").build().metrics();
  }

  /** name{label,label,...} with the labels sorted, for every sample of the text. */
  private static Set<String> samples(String text) {
    Set<String> out = new TreeSet<>();
    Matcher m = SAMPLE.matcher(text);
    while (m.find()) {
      List<String> labels = new ArrayList<>(List.of(m.group(2).split(",")));
      labels.sort(null);
      out.add(m.group(1) + labels);
    }
    return out;
  }

  @Test
  void theDeliveriesAreTheStandaloneRelaysSamplesEveryOneFromZero() {
    RelayMetrics m = metrics();
    String agent = new AgentMetrics(RelaySeries.deliveries(m)).scrape();
    assertThat(samples(agent)).isEqualTo(samples(m.prometheusText())).hasSize(10);
    assertThat(agent).contains("# TYPE " + RelayMetrics.DELIVERIES + " counter")
        .contains("# HELP " + RelayMetrics.DELIVERIES + " " + RelayMetrics.DELIVERIES_HELP)
        .contains(RelayMetrics.DELIVERIES + "{channel=\"kafka\",outcome=\"claim_lost\",table=\"shop.outbox\"} 0.0");
  }

  @Test
  void theTablesGaugesKeepTheirNamesAndUnit() {
    List<FencingSeries.Series> table = RelaySeries.table(metrics());
    assertThat(table).extracting(FencingSeries.Series::prometheusName)
        .containsExactly(RelayMetrics.PENDING, RelayMetrics.OLDEST_PENDING_AGE, RelayMetrics.PARKED);
    assertThat(table.get(1).otlpUnit()).isEqualTo("s");
    assertThat(samples(new AgentMetrics(table).scrape())).containsExactly(
        RelayMetrics.PARKED + "[table=\"shop.outbox\"]", RelayMetrics.PENDING + "[table=\"shop.outbox\"]",
        RelayMetrics.OLDEST_PENDING_AGE + "[table=\"shop.outbox\"]");
  }
}
