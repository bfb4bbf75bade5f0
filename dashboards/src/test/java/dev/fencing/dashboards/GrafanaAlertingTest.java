package dev.fencing.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The Grafana-managed alert rule file (file provisioning, apiVersion 1). */
class GrafanaAlertingTest {
  /** The data source placeholder: an environment variable Grafana substitutes when it provisions the file. */
  static final String DATASOURCE_UID = "${FENCING_PROMETHEUS_DS_UID}";

  static List<JsonNode> rules() {
    JsonNode file = DashboardFiles.yaml(DashboardFiles.GRAFANA_ALERTS);
    assertThat(file.path("apiVersion").asInt()).isEqualTo(1);
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode g : file.path("groups")) {
      assertThat(g.path("name").asText()).isNotBlank();
      assertThat(g.path("folder").asText()).isNotBlank();
      assertThat(g.path("interval").asText()).isNotBlank();
      g.path("rules").forEach(out::add);
    }
    assertThat(out).isNotEmpty();
    return out;
  }

  @Test
  void theStaleWriteRuleIsProvisioned() {
    assertThat(rules()).extracting(r -> r.path("title").asText()).containsExactly("FencingStaleWriteRejected");
  }

  @Test
  void rulesAreWellFormed() {
    for (JsonNode r : rules()) {
      String title = r.path("title").asText();
      assertThat(r.path("uid").asText()).matches("[a-z0-9-]{1,40}");
      Set<String> refIds = new LinkedHashSet<>();
      for (JsonNode q : r.path("data")) {
        assertThat(refIds.add(q.path("refId").asText())).isTrue();
        assertThat(q.path("model").path("refId").asText()).isEqualTo(q.path("refId").asText());
        String ds = q.path("datasourceUid").asText();
        if (ds.equals("__expr__")) {
          String expression = q.path("model").path("expression").asText();
          assertThat(refIds).as("%s: %s reads an earlier query", title, q.path("refId")).contains(expression);
        } else {
          assertThat(ds).as("%s: Prometheus data source placeholder", title).isEqualTo(DATASOURCE_UID);
          assertThat(q.path("model").path("expr").asText()).isNotBlank();
          assertThat(q.path("relativeTimeRange").path("from").asInt()).isPositive();
        }
      }
      assertThat(refIds).contains(r.path("condition").asText());
      assertThat(r.path("noDataState").asText()).isIn("OK", "NoData", "Alerting");
      assertThat(r.path("execErrState").asText()).isIn("OK", "Error", "Alerting");
      assertThat(r.path("labels").path("severity").asText()).isEqualTo(prometheusSeverity(title));
      JsonNode ann = r.path("annotations");
      assertThat(ann.path("summary").asText()).isNotBlank().doesNotContain("{{");
      assertThat(ann.path("description").asText()).contains("{{ .Labels.");
      assertThat(ann.path("runbook_url").asText()).isEqualTo(Runbook.urlFor(title));
    }
  }

  /**
   * Grafana substitutes $NAME in provisioning files: the data source and runbook placeholders must be the only $ in
   * a value.
   */
  @Test
  void theDataSourceAndRunbookPlaceholdersAreTheOnlyDollarSigns() {
    List<String> dollars = new ArrayList<>();
    collect(DashboardFiles.yaml(DashboardFiles.GRAFANA_ALERTS), dollars);
    assertThat(dollars).containsExactly(DATASOURCE_UID, Runbook.urlFor("FencingStaleWriteRejected"));
  }

  @Test
  void queriesAreValidPromqlOverExportedMetrics() {
    List<DashboardTest.Query> queries = new ArrayList<>();
    for (JsonNode r : rules()) {
      for (JsonNode q : r.path("data")) {
        String expr = q.path("model").path("expr").asText();
        if (!expr.isEmpty()) {
          queries.add(new DashboardTest.Query("grafana-alert", r.path("uid").asText(), q.path("refId").asText(), expr));
          assertThat(Promql.catalogProblems(expr, Exposition.catalog())).as(expr).isEmpty();
          assertThat(Promql.counterProblems(expr, "\\d+[smhd]")).as(expr).isEmpty();
        }
      }
    }
    Path dir = QueryRules.write(queries, List.of());
    Promtool.Result result = Promtool.run(dir, "check", "rules", QueryRules.RULES);
    assertThat(result.exitCode()).as(result.output()).isZero();
  }

  private static String prometheusSeverity(String alert) {
    for (JsonNode rule : AlertRulesTest.alertingRules()) {
      if (rule.path("alert").asText().equals(alert)) {
        return rule.path("labels").path("severity").asText();
      }
    }
    throw new AssertionError("no Prometheus rule named " + alert);
  }

  private static void collect(JsonNode node, List<String> dollars) {
    if (node.isTextual() && node.asText().contains("$")) {
      dollars.add(node.asText());
    }
    node.forEach(child -> collect(child, dollars));
  }
}
