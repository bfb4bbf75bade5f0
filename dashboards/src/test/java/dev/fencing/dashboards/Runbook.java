package dev.fencing.dashboards;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/** The anchors of RUNBOOK.md, as GitHub-style renderers make them from level-2 headings. */
final class Runbook {
  private Runbook() {
  }

  static Set<String> headings() {
    Set<String> out = new LinkedHashSet<>();
    for (String line : DashboardFiles.read(DashboardFiles.RUNBOOK).split("\n")) {
      if (line.startsWith("## ")) {
        out.add(line.substring(3).trim());
      }
    }
    return out;
  }

  static String anchor(String heading) {
    return heading.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
  }

  /** The runbook_url an alert named {@code alert} must carry. */
  static String urlFor(String alert) {
    return DashboardFiles.RUNBOOK_URL + "#" + anchor(alert);
  }
}
