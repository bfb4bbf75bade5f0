package dev.fencing.outbox;

/**
 * A relay's real exposition ({@link RelayMetrics#prometheusText()}) after it has read its table and delivered on both
 * channels with every outcome. In the relay's package because the metrics are fed only by the relay itself; running a
 * relay against a database would add nothing the dashboards' tests look at (names, labels, label values).
 */
public final class RelayExposition {
  private RelayExposition() {
  }

  public static String of(String table) {
    RelayMetrics m = new RelayMetrics(table);
    m.table(3, 42.5, 1);
    for (String channel : new String[] {"http", "kafka"}) {
      for (RelayMetrics.Outcome o : RelayMetrics.Outcome.values()) {
        m.delivery(channel, o);
      }
    }
    return m.prometheusText();
  }
}
