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
   * Every alert: stale writes, token reuse and overflow, no holder or two, flapping, blocked side effects; forged and
   * unsigned tokens at a fence, failing hooks; a FAILED agent, headroom near the end, a slow coordinator; the fences'
   * view of stale writes under a name of its own; the outbox's late and parked events; a lock's side effects reaching
   * a new unfenced destination.
   */
  static final List<String> ALERTS = List.of("FencingStaleWriteRejected", "FencingStaleWriteRejectedAtFence",
      "FencingTokenReuseDetected", "FencingTokenOverflow", "FencingTokenHeadroomLow", "FencingTokenHeadroomCritical",
      "FencingAgentFailed", "FencingSideEffectsBlocked", "FencingNoHolder", "FencingMultipleHolders",
      "FencingLeaseFlapping", "FencingCoordinatorSlow", "FencingForgedToken", "FencingUnsignedToken",
      "FencingHookFailing", "FencingOutboxDeliveryLagging", "FencingOutboxEventsParked",
      "FencingUnfencedDestination");
  /** Page: two holders at once, token reuse, overflow and its headroom, a FAILED agent, no holder, forged tokens. */
  static final Set<String> PAGED = Set.of("FencingMultipleHolders", "FencingTokenReuseDetected", "FencingTokenOverflow",
      "FencingTokenHeadroomCritical", "FencingAgentFailed", "FencingNoHolder", "FencingForgedToken");
  /** A stale write a fence rejected is the system doing its job: never a page. */
  static final Set<String> NOT_PAGED = Set.of("FencingStaleWriteRejected", "FencingStaleWriteRejectedAtFence");
  /** Labels every aggregation keeps, so two environments (or services) sharing a lock name do not page each other. */
  static final List<String> KEPT_LABELS = List.of("cluster", "namespace", "job");
  private static final java.util.regex.Pattern GROUPING =
      java.util.regex.Pattern.compile("\\b(by|without|on|ignoring)\\s*\\(([^)]*)\\)");

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
  void theRuleFileHoldsExactlyTheAlertsOfTheIssueEachNameOnce() {
    List<String> names = new ArrayList<>();
    for (JsonNode rule : alertingRules()) {
      assertThat(rule.has("alert")).as("only alerting rules: %s", rule).isTrue();
      names.add(rule.path("alert").asText());
    }
    assertThat(names).as("alert names (an alert name used twice cannot be silenced or routed apart)")
        .doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(ALERTS);
  }

  @Test
  void everyAlertSaysHowLongItsConditionMustHold() {
    for (JsonNode rule : alertingRules()) {
      assertThat(rule.path("for").asText()).as("for: of %s (0m for alerts on events)", rule.path("alert").asText())
          .matches("\\d+[smh]");
    }
  }

  @Test
  void everyAggregationKeepsClusterNamespaceAndJob() {
    for (JsonNode rule : alertingRules()) {
      String expr = rule.path("expr").asText();
      java.util.regex.Matcher m = GROUPING.matcher(expr);
      int groupings = 0;
      while (m.find()) {
        groupings++;
        assertThat(m.group(1)).as("%s: grouping with by/on only", rule.path("alert").asText()).isIn("by", "on");
        List<String> labels = java.util.Arrays.stream(m.group(2).split(",")).map(String::trim).toList();
        assertThat(labels).as("%s: %s", rule.path("alert").asText(), m.group()).containsAll(KEPT_LABELS);
      }
      assertThat(groupings).as("%s aggregates", rule.path("alert").asText()).isPositive();
    }
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
      assertThat(severity.equals("critical")).as("%s is critical (pages) exactly when it is one of %s", name, PAGED)
          .isEqualTo(PAGED.contains(name));
      if (NOT_PAGED.contains(name)) {
        assertThat(severity).as("%s: the fence did its job", name).isIn("warning", "info");
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
