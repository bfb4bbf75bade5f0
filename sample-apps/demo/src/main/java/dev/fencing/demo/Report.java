package dev.fencing.demo;

import java.util.List;
import java.util.Locale;

/** Prints the end-state checks and the counters that changed between the freeze and the end. */
final class Report {
  private Report() {}

  static void checks(Console console, List<EndStateChecks.Check> checks) {
    console.heading("End state");
    for (EndStateChecks.Check c : checks) {
      console.line("  [" + (c.ok() ? "ok" : "FAILED") + "] " + c.claim());
      console.line("         " + c.evidence());
    }
  }

  static void metrics(Console console, Facts facts) {
    metrics(console, facts.before(), facts.after());
  }

  static void metrics(Console console, MetricsSnapshot before, MetricsSnapshot after) {
    console.heading("Counters that changed (scraped just before the freeze and at the end)");
    String source = null;
    for (MetricsSnapshot.Change c : after.changesSince(before)) {
      if (!c.source().equals(source)) {
        source = c.source();
        console.line("  " + source);
      }
      console.line(String.format(Locale.ROOT, "    %-92s %5s -> %s", c.series(), number(c.before()),
          number(c.after())));
    }
  }

  private static String number(double value) {
    return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
  }
}
