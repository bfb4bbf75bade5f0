package dev.fencing.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The Grafana dashboards: structure, portability (no data source pinned), units, descriptions and their queries. */
class DashboardTest {
  static final int SCHEMA_VERSION = 39;
  static final String DATASOURCE_UID = "${datasource}";
  static final Pattern LABEL_VALUES = Pattern.compile("^label_values\\((.+),\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\)$");

  static List<Path> dashboards() {
    return DashboardFiles.dashboards();
  }

  /** Panels with their nested ones (collapsed rows keep theirs inside). */
  static List<JsonNode> panels(JsonNode dashboard) {
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode p : dashboard.path("panels")) {
      out.add(p);
      p.path("panels").forEach(out::add);
    }
    return out;
  }

  static boolean isRow(JsonNode panel) {
    return panel.path("type").asText().equals("row");
  }

  @Test
  void thereAreTheAgentAndTheFencesDashboards() {
    assertThat(dashboards()).extracting(p -> p.getFileName().toString())
        .containsExactly("fencing-agent.json", "fencing-fences.json");
  }

  @ParameterizedTest
  @MethodSource("dashboards")
  void isAClassicDashboardWithAPinnedSchemaVersion(Path file) {
    JsonNode d = DashboardFiles.json(file);
    assertThat(d.path("schemaVersion").asInt()).isEqualTo(SCHEMA_VERSION);
    assertThat(d.path("uid").asText()).matches("fencing-[a-z-]+");
    assertThat(d.path("title").asText()).startsWith("Fencing / ");
    assertThat(d.path("id").isNull()).as("id is assigned by Grafana on import").isTrue();
    assertThat(d.path("tags")).extracting(JsonNode::asText).contains("fencing");
    assertThat(d.path("panels").isArray()).isTrue();
    assertThat(d.has("__inputs")).as("no export-time data source inputs").isFalse();
  }

  @ParameterizedTest
  @MethodSource("dashboards")
  void pickTheirDataSourceWithAVariable(Path file) {
    JsonNode d = DashboardFiles.json(file);
    List<JsonNode> dsVars = new ArrayList<>();
    for (JsonNode v : d.path("templating").path("list")) {
      if (v.path("type").asText().equals("datasource")) {
        dsVars.add(v);
      }
    }
    assertThat(dsVars).hasSize(1);
    assertThat(dsVars.get(0).path("name").asText()).isEqualTo("datasource");
    assertThat(dsVars.get(0).path("query").asText()).isEqualTo("prometheus");
    // Nowhere a data source uid other than the variable, so the dashboard imports into any Grafana as it is.
    List<String> problems = new ArrayList<>();
    walk(d, "", (path, key, value) -> {
      if (key.equals("uid") && !path.isEmpty() && !value.asText().equals(DATASOURCE_UID)) {
        problems.add(path + "/uid = " + value);
      }
      if (key.equals("datasource") && !value.isObject()) {
        problems.add(path + "/datasource = " + value + " (must be {type: prometheus, uid: ${datasource}})");
      }
      if (key.equals("datasource") && value.isObject()) {
        assertDatasource(value, path, problems);
      }
    });
    assertThat(problems).isEmpty();
  }

  @ParameterizedTest
  @MethodSource("dashboards")
  void filterByJobInstanceAndLock(Path file) {
    JsonNode d = DashboardFiles.json(file);
    Map<String, Map<String, Set<String>>> catalog = Exposition.catalog();
    Set<String> names = new LinkedHashSet<>();
    for (JsonNode v : d.path("templating").path("list")) {
      if (!v.path("type").asText().equals("query")) {
        continue;
      }
      names.add(v.path("name").asText());
      String query = v.path("query").isObject() ? v.path("query").path("query").asText() : v.path("query").asText();
      Matcher m = LABEL_VALUES.matcher(query);
      assertThat(m.matches()).as("variable %s: label_values(<selector>, <label>), got %s", v.path("name"), query).isTrue();
      assertThat(Promql.catalogProblems(Promql.substituteGrafanaVariables(m.group(1)), catalog)).as(query).isEmpty();
      String metric = Promql.selectors(m.group(1)).get(0).name();
      Set<String> labels = new LinkedHashSet<>(catalog.get(metric).keySet());
      labels.addAll(Exposition.SCRAPE_LABELS);
      assertThat(labels).as("labels of %s", metric).contains(m.group(2));
      assertThat(v.path("datasource").path("uid").asText()).isEqualTo(DATASOURCE_UID);
      assertThat(v.path("refresh").asInt()).as("refreshed on time range change").isEqualTo(2);
    }
    assertThat(names).contains("job", "instance", "lock");
  }

  @ParameterizedTest
  @MethodSource("dashboards")
  void everyPanelHasAUnitADescriptionAndQueries(Path file) {
    for (JsonNode p : panels(DashboardFiles.json(file))) {
      String title = p.path("title").asText();
      assertThat(title).isNotBlank();
      assertThat(p.path("description").asText()).as("description of '%s'", title).isNotBlank();
      if (isRow(p)) {
        assertThat(p.has("targets")).as("row '%s' has no queries", title).isFalse();
        continue;
      }
      assertThat(p.path("fieldConfig").path("defaults").path("unit").asText()).as("unit of '%s'", title).isNotBlank();
      assertThat(p.path("targets")).as("queries of '%s'", title).isNotEmpty();
      Set<String> refIds = new LinkedHashSet<>();
      for (JsonNode t : p.path("targets")) {
        assertThat(refIds.add(t.path("refId").asText())).as("refIds of '%s' unique", title).isTrue();
        assertThat(t.path("expr").asText()).as("expr of '%s'", title).isNotBlank();
        assertThat(t.has("legendFormat")).as("legend of '%s'", title).isTrue();
      }
    }
  }

  @ParameterizedTest
  @MethodSource("dashboards")
  void panelsHaveUniqueIdsAndDoNotOverlap(Path file) {
    List<int[]> boxes = new ArrayList<>();
    Set<Integer> ids = new LinkedHashSet<>();
    for (JsonNode p : panels(DashboardFiles.json(file))) {
      assertThat(ids.add(p.path("id").asInt())).as("id %s unique", p.path("id")).isTrue();
      JsonNode g = p.path("gridPos");
      int x = g.path("x").asInt(), y = g.path("y").asInt(), w = g.path("w").asInt(), h = g.path("h").asInt();
      assertThat(w).isPositive();
      assertThat(h).isPositive();
      assertThat(x + w).as("'%s' fits the 24 columns", p.path("title").asText()).isLessThanOrEqualTo(24);
      for (int[] b : boxes) {
        boolean overlap = x < b[0] + b[2] && b[0] < x + w && y < b[1] + b[3] && b[1] < y + h;
        assertThat(overlap).as("'%s' overlaps another panel", p.path("title").asText()).isFalse();
      }
      boxes.add(new int[] {x, y, w, h});
    }
  }

  @ParameterizedTest
  @MethodSource("dashboards")
  void countersAreOnlyReadThroughRateOrIncreaseOverTheRateInterval(Path file) {
    for (Query q : queries(file)) {
      assertThat(Promql.counterProblems(q.expr(), "\\$__rate_interval")).as(q.toString()).isEmpty();
    }
  }

  @ParameterizedTest
  @MethodSource("dashboards")
  void queriesUseOnlyExportedMetricsLabelsAndValues(Path file) {
    Map<String, Map<String, Set<String>>> catalog = Exposition.catalog();
    for (Query q : queries(file)) {
      assertThat(Promql.selectors(q.expr())).as(q.toString()).isNotEmpty();
      assertThat(Promql.catalogProblems(q.expr(), catalog)).as(q.toString()).isEmpty();
    }
  }

  @Test
  void togetherTheDashboardsShowEveryExportedMetric() {
    Set<String> shown = new LinkedHashSet<>();
    for (Path file : dashboards()) {
      for (Query q : queries(file)) {
        Promql.selectors(q.expr()).forEach(s -> shown.add(s.name()));
      }
    }
    assertThat(shown).containsAll(Exposition.catalog().keySet());
  }

  @Test
  void agentDashboardShowsHoldersAndFlagsMoreThanOne() {
    JsonNode d = DashboardFiles.json(DashboardFiles.DIR.resolve("grafana/fencing-agent.json"));
    JsonNode holders = null;
    for (JsonNode p : panels(d)) {
      if (p.path("title").asText().equals("Holders per lock")) {
        holders = p;
      }
    }
    assertThat(holders).isNotNull();
    assertThat(holders.path("type").asText()).isEqualTo("stat");
    // Red below 1 (no holder) and from 2 on (more than one holder), green at exactly 1.
    List<String> steps = new ArrayList<>();
    for (JsonNode s : holders.path("fieldConfig").path("defaults").path("thresholds").path("steps")) {
      steps.add(s.path("color").asText() + "@" + (s.path("value").isNull() ? "base" : s.path("value").asText()));
    }
    assertThat(steps).containsExactly("red@base", "green@1", "red@2");
  }

  /** promtool parses every panel query (template variables substituted) as a recording rule. */
  @Test
  void everyQueryIsValidPromql() {
    Path dir = QueryRules.write(allQueries(), List.of());
    Promtool.Result r = Promtool.run(dir, "check", "rules", QueryRules.RULES);
    assertThat(r.exitCode()).as(r.output()).isZero();
    assertThat(r.output()).contains("SUCCESS: " + 2 * allQueries().size() + " rules found");
  }

  /**
   * Every panel query returns data when Prometheus has scraped the real expositions of two agents (one holding the
   * lock, one standby) and an HTTP fence, with every counter moving: a wrong name, label or value would leave a panel
   * empty, and promtool reports which.
   */
  @Test
  void everyQueryReturnsDataFromTheRealExpositions() {
    Path dir = QueryRules.write(allQueries(), QueryRules.scrapedSeries());
    Promtool.Result r = Promtool.run(dir, "test", "rules", QueryRules.TESTS);
    assertThat(r.exitCode()).as(r.output()).isZero();
    assertThat(r.output()).contains("SUCCESS");
  }

  record Query(String dashboard, String panel, String refId, String expr) {
    String id() {
      return (dashboard + "_" + panel + "_" + refId).replaceAll("[^a-zA-Z0-9_]", "_");
    }
  }

  static List<Query> queries(Path file) {
    JsonNode d = DashboardFiles.json(file);
    List<Query> out = new ArrayList<>();
    for (JsonNode p : panels(d)) {
      for (JsonNode t : p.path("targets")) {
        out.add(new Query(d.path("uid").asText(), p.path("id").asText(), t.path("refId").asText(), t.path("expr").asText()));
      }
    }
    return out;
  }

  static List<Query> allQueries() {
    List<Query> out = new ArrayList<>();
    dashboards().forEach(f -> out.addAll(queries(f)));
    return out;
  }

  private static void assertDatasource(JsonNode ds, String path, List<String> problems) {
    if (!ds.path("type").asText().equals("prometheus") || !ds.path("uid").asText().equals(DATASOURCE_UID)) {
      problems.add(path + "/datasource = " + ds + " (must be {type: prometheus, uid: ${datasource}})");
    }
  }

  interface Visitor {
    void visit(String path, String key, JsonNode value);
  }

  private static void walk(JsonNode node, String path, Visitor v) {
    if (node.isObject()) {
      node.properties().forEach(e -> {
        v.visit(path, e.getKey(), e.getValue());
        walk(e.getValue(), path + "/" + e.getKey(), v);
      });
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        walk(node.get(i), path + "/" + i, v);
      }
    }
  }
}
