package dev.fencing.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The Prometheus alert rules: promtool accepts them, their unit tests pass, and they follow the mixin conventions. */
class AlertRulesTest {
  /**
   * The alerts issue 6 asks for (the first three page: docs/DESIGN.md section 1, "paged on stale-write rejections..."),
   * then issue 8's: forged (paged) and unsigned tokens at a fence, failing hooks.
   */
  static final List<String> ALERTS = List.of("FencingStaleWriteRejected", "FencingTokenReuseDetected",
      "FencingTokenOverflow", "FencingTokenHeadroomLow", "FencingSideEffectsBlocked", "FencingNoHolder",
      "FencingMultipleHolders", "FencingLeaseFlapping", "FencingForgedToken", "FencingUnsignedToken",
      "FencingHookFailing");
  static final Set<String> PAGED = Set.of("FencingStaleWriteRejected", "FencingTokenReuseDetected", "FencingTokenOverflow",
      "FencingForgedToken");

  static List<JsonNode> alertingRules() {
    List<JsonNode> rules = new ArrayList<>();
    for (JsonNode group : DashboardFiles.yaml(DashboardFiles.ALERT_RULES).path("groups")) {
      group.path("rules").forEach(rules::add);
    }
    return rules;
  }

  @Test
  void promtoolAcceptsTheRulesWithoutLintFindings() {
    Promtool.Result r = Promtool.run(DashboardFiles.ALERT_RULES.getParent(), "check", "rules",
        DashboardFiles.ALERT_RULES.getFileName().toString());
    assertThat(r.exitCode()).as(r.output()).isZero();
    assertThat(r.output()).contains("SUCCESS").doesNotContain("lint");
  }

  @Test
  void promtoolUnitTestsPass() {
    Promtool.Result r = Promtool.run(DashboardFiles.ALERT_TESTS.getParent(), "test", "rules",
        DashboardFiles.ALERT_TESTS.getFileName().toString());
    assertThat(r.exitCode()).as(r.output()).isZero();
    assertThat(r.output()).contains("SUCCESS");
  }

  @Test
  void theRuleFileHoldsExactlyTheAlertsOfTheIssue() {
    Set<String> names = new LinkedHashSet<>();
    for (JsonNode rule : alertingRules()) {
      assertThat(rule.has("alert")).as("only alerting rules: %s", rule).isTrue();
      names.add(rule.path("alert").asText());
    }
    assertThat(names).containsExactlyInAnyOrderElementsOf(ALERTS);
  }

  @Test
  void everyAlertHasCasesThatFireAndCasesThatStaySilent() {
    Map<String, Set<String>> kinds = new LinkedHashMap<>();
    for (JsonNode test : DashboardFiles.yaml(DashboardFiles.ALERT_TESTS).path("tests")) {
      for (JsonNode t : test.path("alert_rule_test")) {
        String kind = t.path("exp_alerts").isEmpty() ? "silent" : "firing";
        kinds.computeIfAbsent(t.path("alertname").asText(), k -> new LinkedHashSet<>()).add(kind);
      }
    }
    for (String alert : ALERTS) {
      assertThat(kinds.get(alert)).as("unit test cases of %s", alert).containsExactlyInAnyOrder("firing", "silent");
    }
    assertThat(DashboardFiles.yaml(DashboardFiles.ALERT_TESTS).path("rule_files").get(0).asText())
        .isEqualTo(DashboardFiles.ALERT_RULES.getFileName().toString());
  }

  @Test
  void alertsFollowTheMonitoringMixinConventions() {
    Set<String> anchors = new LinkedHashSet<>();
    Runbook.headings().forEach(h -> anchors.add(Runbook.anchor(h)));
    for (JsonNode rule : alertingRules()) {
      String name = rule.path("alert").asText();
      assertThat(name).matches("Fencing[A-Z][A-Za-z]+");
      String severity = rule.path("labels").path("severity").asText();
      assertThat(severity).as("severity of %s", name).isIn("critical", "warning", "info");
      if (PAGED.contains(name)) {
        assertThat(severity).as("%s pages", name).isEqualTo("critical");
      }
      JsonNode ann = rule.path("annotations");
      assertThat(ann.path("summary").asText()).as("summary of %s: static text", name).isNotBlank().doesNotContain("{{");
      assertThat(ann.path("description").asText()).as("description of %s: templated", name).contains("{{ $labels.");
      String url = ann.path("runbook_url").asText();
      assertThat(url).as("runbook_url of %s", name).isEqualTo(Runbook.urlFor(name));
      assertThat(anchors).as("RUNBOOK.md sections").contains(url.substring(url.indexOf('#') + 1));
    }
  }

  @Test
  void everyRunbookSectionIsAnAlert() {
    assertThat(Runbook.headings()).containsExactlyInAnyOrderElementsOf(ALERTS);
  }

  @Test
  void rulesUseOnlyExportedMetricsLabelsAndValues() {
    Map<String, Map<String, Set<String>>> catalog = Exposition.catalog();
    for (JsonNode rule : alertingRules()) {
      String expr = rule.path("expr").asText();
      assertThat(Promql.selectors(expr)).as(expr).isNotEmpty();
      assertThat(Promql.catalogProblems(expr, catalog)).as("%s: %s", rule.path("alert").asText(), expr).isEmpty();
      assertThat(Promql.counterProblems(expr, "\\d+[smhd]")).as(expr).isEmpty();
    }
  }
}
