package dev.fencing.dashboards;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The files under test, at their stable paths in dashboards/ (the module directory). */
final class DashboardFiles {
  static final Path DIR = Path.of(System.getProperty("fencing.dashboards.dir", ".")).toAbsolutePath().normalize();
  static final Path ALERT_RULES = DIR.resolve("prometheus/fencing-alerts.yaml");
  static final Path ALERT_TESTS = DIR.resolve("prometheus/fencing-alerts.test.yaml");
  static final Path GRAFANA_ALERTS = DIR.resolve("grafana/provisioning/alerting/fencing-alerts.yaml");
  static final Path PROMETHEUS_RULE = DIR.resolve("prometheus/fencing-prometheusrule.yaml");
  static final Path RENDER = DIR.resolve("render-alerts.sh");
  static final Path RUNBOOK = DIR.resolve("RUNBOOK.md");
  /**
   * Where RUNBOOK.md is published: a placeholder that render-alerts.sh replaces (and Grafana, from the environment);
   * every runbook_url is this plus an anchor (README.md).
   */
  static final String RUNBOOK_URL = "${FENCING_RUNBOOK_URL}";

  static final ObjectMapper JSON = new ObjectMapper();
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private DashboardFiles() {
  }

  /** The Grafana dashboards: every JSON file in grafana/. */
  static List<Path> dashboards() {
    try (Stream<Path> s = Files.list(DIR.resolve("grafana"))) {
      return s.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonNode json(Path p) {
    try {
      return JSON.readTree(p.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonNode yaml(Path p) {
    try {
      return YAML.readTree(p.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
