package dev.fencing.dashboards;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns dashboard queries into a promtool rule file (one recording rule per query, with Grafana's template variables
 * substituted, and an alert that fires when the recording is empty) and a promtool unit test that feeds it series.
 * JSON is valid YAML, so promtool reads both files as they are written here.
 */
final class QueryRules {
  static final String RULES = "dashboard-queries.rules.json";
  static final String TESTS = "dashboard-queries.test.json";
  static final String EMPTY_ALERT = "FencingDashboardQueryEmpty";

  /** One input series in promtool's notation. */
  record Series(String selector, String values) {
  }

  private QueryRules() {
  }

  static Path write(List<DashboardTest.Query> queries, List<Series> series) {
    ObjectNode rules = DashboardFiles.JSON.createObjectNode();
    ObjectNode group = rules.putArray("groups").addObject();
    group.put("name", "dashboard-queries");
    ArrayNode list = group.putArray("rules");
    for (DashboardTest.Query q : queries) {
      list.addObject().put("record", "fencing_dashboard_query:" + q.id()).put("expr", Promql.substituteGrafanaVariables(q.expr()));
    }
    // Evaluated after the recordings of the same group, at the same instant.
    for (DashboardTest.Query q : queries) {
      ObjectNode alert = list.addObject().put("alert", EMPTY_ALERT).put("expr", "absent(fencing_dashboard_query:" + q.id() + ")");
      alert.putObject("labels").put("query", q.dashboard() + " panel " + q.panel() + " " + q.refId());
    }

    ObjectNode tests = DashboardFiles.JSON.createObjectNode();
    tests.putArray("rule_files").add(RULES);
    tests.put("evaluation_interval", "1m");
    ObjectNode test = tests.putArray("tests").addObject();
    test.put("interval", "1m");
    ArrayNode input = test.putArray("input_series");
    series.forEach(s -> input.addObject().put("series", s.selector()).put("values", s.values()));
    ObjectNode check = test.putArray("alert_rule_test").addObject();
    check.put("eval_time", "30m").put("alertname", EMPTY_ALERT);
    check.putArray("exp_alerts");
    try {
      Path dir = Files.createTempDirectory("fencing-dashboard-queries");
      DashboardFiles.JSON.writerWithDefaultPrettyPrinter().writeValue(dir.resolve(RULES).toFile(), rules);
      DashboardFiles.JSON.writerWithDefaultPrettyPrinter().writeValue(dir.resolve(TESTS).toFile(), tests);
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * What Prometheus would hold after scraping the real expositions of agent a (holding lock ledger with token 42),
   * agent b (standby), an HTTP fence and an outbox relay, every 1m for 40m: gauges keep their scraped value, counters grow by 1 a scrape.
   */
  static List<Series> scrapedSeries() {
    List<Series> out = new ArrayList<>();
    add(out, Exposition.agent("ledger", 42), "worker", "a:9464");
    add(out, Exposition.agent("ledger", 0), "worker", "b:9464");
    add(out, Exposition.httpFence("ledger"), "orders-api", "f:8080");
    add(out, Exposition.outboxRelay("outbox"), "outbox-relay", "r:9465");
    return out;
  }

  private static void add(List<Series> out, String exposition, String job, String instance) {
    for (Exposition.Sample s : Exposition.parse(exposition)) {
      Map<String, String> labels = new LinkedHashMap<>(s.labels());
      labels.put("job", job);
      labels.put("instance", instance);
      StringBuilder sel = new StringBuilder(s.name()).append('{');
      labels.forEach((k, v) -> sel.append(k).append("=\"").append(v.replace("\\", "\\\\").replace("\"", "\\\"")).append("\","));
      sel.setLength(sel.length() - 1);
      sel.append('}');
      String values = Exposition.isCounter(s.name())
          ? "0+1x40"
          : new BigDecimal(s.value()).stripTrailingZeros().toPlainString() + "+0x40";
      out.add(new Series(sel.toString(), values));
    }
  }
}
