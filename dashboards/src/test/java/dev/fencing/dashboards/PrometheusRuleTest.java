package dev.fencing.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kubernetes PrometheusRule and rendered rule files come from the one source, fencing-alerts.yaml, through
 * render-alerts.sh: the committed PrometheusRule is its rendering, and a rendering with a real runbook address links
 * every alert there.
 */
class PrometheusRuleTest {
  @TempDir
  Path out;

  private String render(String url) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("bash", DashboardFiles.RENDER.toString(), url, out.toString())
        .redirectErrorStream(true).start();
    p.getOutputStream().close();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(output).isZero();
    return output;
  }

  @Test
  void theCommittedPrometheusRuleIsTheRenderingOfTheRuleFile() throws Exception {
    render(DashboardFiles.RUNBOOK_URL);
    assertThat(out.resolve("fencing-prometheusrule.yaml")).as("dashboards/render-alerts.sh '${FENCING_RUNBOOK_URL}' "
        + "dashboards/prometheus, then commit").hasSameTextualContentAs(DashboardFiles.PROMETHEUS_RULE);
    assertThat(out.resolve("fencing-alerts.yaml")).hasSameTextualContentAs(DashboardFiles.ALERT_RULES);
  }

  @Test
  void thePrometheusRuleHoldsTheRuleFilesGroups() {
    JsonNode rule = DashboardFiles.yaml(DashboardFiles.PROMETHEUS_RULE);
    assertThat(rule.path("apiVersion").asText()).isEqualTo("monitoring.coreos.com/v1");
    assertThat(rule.path("kind").asText()).isEqualTo("PrometheusRule");
    assertThat(rule.path("metadata").path("name").asText()).isEqualTo("fencing-agent-alerts");
    assertThat(rule.path("spec").path("groups")).isEqualTo(DashboardFiles.yaml(DashboardFiles.ALERT_RULES).path("groups"));
  }

  @Test
  void aRenderingWithARunbookAddressLinksEveryAlertThereAndPromtoolAcceptsIt() throws Exception {
    String url = "https://git.example.org/ops/fencing/blob/main/dashboards/RUNBOOK.md";
    render(url);
    Path rules = out.resolve("fencing-alerts.yaml");
    Promtool.Result r = Promtool.run(out, "check", "rules", rules.getFileName().toString());
    assertThat(r.exitCode()).as(r.output()).isZero();
    assertThat(Files.readString(rules)).doesNotContain(DashboardFiles.RUNBOOK_URL);
    for (Path file : new Path[] {rules, out.resolve("fencing-prometheusrule.yaml")}) {
      JsonNode root = DashboardFiles.yaml(file);
      JsonNode groups = root.has("spec") ? root.path("spec").path("groups") : root.path("groups");
      int alerts = 0;
      for (JsonNode g : groups) {
        for (JsonNode rule : g.path("rules")) {
          alerts++;
          assertThat(rule.path("annotations").path("runbook_url").asText())
              .isEqualTo(url + "#" + Runbook.anchor(rule.path("alert").asText()));
        }
      }
      assertThat(alerts).as(file.toString()).isEqualTo(AlertRulesTest.ALERTS.size());
    }
  }

  @Test
  void aRunbookAddressWithAnAnchorIsRefused() throws Exception {
    Process p = new ProcessBuilder("bash", DashboardFiles.RENDER.toString(), "https://x.example/RUNBOOK.md#top",
        out.toString()).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(2);
    assertThat(output).contains("must not have an anchor");
  }
}
