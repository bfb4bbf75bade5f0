package dev.fencing.dashboards;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Just enough PromQL reading to check the dashboards and rules against the exported metrics: the fencing_* selectors
 * with their label matchers, the grouping labels, and the place of every counter. Syntax is promtool's job.
 */
final class Promql {
  record Matcher3(String label, String op, String value) {
  }

  /** One {@code fencing_*} selector: where it starts and ends in the expression, its name and matchers. */
  record Selector(int start, int end, String name, List<Matcher3> matchers) {
  }

  private static final Pattern SELECTOR = Pattern.compile("\\b(fencing_[a-z_]+)\\b(\\s*\\{([^}]*)\\})?");
  private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)");

  private Promql() {
  }

  static List<Selector> selectors(String expr) {
    List<Selector> out = new ArrayList<>();
    Matcher m = SELECTOR.matcher(expr);
    while (m.find()) {
      List<Matcher3> matchers = new ArrayList<>();
      if (m.group(3) != null) {
        Matcher mm = MATCHER.matcher(m.group(3));
        while (mm.find()) {
          matchers.add(new Matcher3(mm.group(1), mm.group(2), mm.group(3)));
        }
      }
      out.add(new Selector(m.start(), m.end(), m.group(1), matchers));
    }
    return out;
  }

  static Set<String> groupingLabels(String expr) {
    Set<String> out = new LinkedHashSet<>();
    Matcher m = GROUPING.matcher(expr);
    while (m.find()) {
      for (String l : m.group(1).split(",")) {
        if (!l.isBlank()) {
          out.add(l.trim());
        }
      }
    }
    return out;
  }

  /**
   * Problems with counters in {@code expr}: every {@code *_total} selector must be the range argument of rate() or
   * increase() with a range matching {@code rangePattern}.
   */
  static List<String> counterProblems(String expr, String rangePattern) {
    List<String> problems = new ArrayList<>();
    Pattern after = Pattern.compile("^\\s*\\[" + rangePattern + "\\]\\s*\\)");
    Pattern before = Pattern.compile("\\b(rate|increase)\\s*\\(\\s*$");
    for (Selector s : selectors(expr)) {
      if (!Exposition.isCounter(s.name())) {
        continue;
      }
      boolean ok = before.matcher(expr.substring(0, s.start())).find() && after.matcher(expr.substring(s.end())).find();
      if (!ok) {
        problems.add(s.name() + " is not inside rate(...[" + rangePattern + "]) or increase(...[" + rangePattern + "])");
      }
    }
    return problems;
  }

  /** Problems with names, labels and label values in {@code expr}, against the real expositions' {@code catalog}. */
  static List<String> catalogProblems(String expr, Map<String, Map<String, Set<String>>> catalog) {
    List<String> problems = new ArrayList<>();
    Set<String> knownLabels = new LinkedHashSet<>(Exposition.SCRAPE_LABELS);
    for (Selector s : selectors(expr)) {
      Map<String, Set<String>> labels = catalog.get(s.name());
      if (labels == null) {
        problems.add("metric " + s.name() + " is not exported (exported: " + catalog.keySet() + ")");
        continue;
      }
      knownLabels.addAll(labels.keySet());
      for (Matcher3 m : s.matchers()) {
        if (Exposition.SCRAPE_LABELS.contains(m.label())) {
          continue;
        }
        Set<String> values = labels.get(m.label());
        if (values == null) {
          problems.add(s.name() + " has no label " + m.label() + " (labels: " + labels.keySet() + ")");
        } else if (!m.value().contains("$") && (m.op().equals("=") || m.op().equals("=~"))) {
          for (String v : m.op().equals("=") ? List.of(m.value()) : List.of(m.value().split("\\|"))) {
            if (!values.contains(v) && !m.label().equals("lock")) {
              problems.add(s.name() + "{" + m.label() + "} never takes the value '" + v + "' (values: " + values + ")");
            }
          }
        }
      }
    }
    for (String l : groupingLabels(expr)) {
      if (!knownLabels.contains(l)) {
        problems.add("grouping label " + l + " is on none of the selected metrics (labels: " + knownLabels + ")");
      }
    }
    return problems;
  }

  /** A Grafana query with its template variables replaced by values Prometheus accepts. */
  static String substituteGrafanaVariables(String expr) {
    return expr.replace("$__rate_interval", "5m").replaceAll("\\$\\{?[A-Za-z_][A-Za-z0-9_]*\\}?", ".+");
  }
}
