package dev.fencing.demo;

import dev.fencing.testing.Http;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The counters ({@code fencing_*_total}) of every process that exports them, scraped at one moment: the two
 * workers' and the service's agents ({@code GET /metrics} of the agent's endpoint), the service's HTTP fence and the
 * consumer's Kafka fence.
 */
final class MetricsSnapshot {
  private static final Pattern LABEL = Pattern.compile("(\\w+)=\"([^\"]*)\"");

  /** Where a snapshot reads from: a name for the output and the text it scrapes. */
  record Source(String name, Supplier<String> scrape) {}

  /** One series that differs between two snapshots. */
  record Change(String source, String series, double before, double after) {}

  private final Map<String, Map<String, Double>> values;

  private MetricsSnapshot(Map<String, Map<String, Double>> values) {
    this.values = values;
  }

  static MetricsSnapshot scrape(List<Source> sources) {
    Map<String, Map<String, Double>> values = new LinkedHashMap<>();
    for (Source source : sources) {
      String text;
      try {
        text = source.scrape().get();
      } catch (RuntimeException e) {
        throw new StoryBroken("cannot scrape the metrics of " + source.name() + ": " + e.getMessage(), e);
      }
      values.put(source.name(), parse(text));
    }
    return new MetricsSnapshot(values);
  }

  static Source http(String name, String url) {
    return new Source(name, () -> Http.get(url));
  }

  /** Counter series of a Prometheus text exposition, keyed by their text ({@code name{labels}}). */
  static Map<String, Double> parse(String text) {
    Map<String, Double> series = new TreeMap<>();
    for (String line : text.split("\n")) {
      line = line.strip();
      if (line.isEmpty() || line.startsWith("#") || !line.startsWith("fencing_")) {
        continue;
      }
      int space = line.lastIndexOf(' ');
      String key = line.substring(0, space);
      String name = key.contains("{") ? key.substring(0, key.indexOf('{')) : key;
      if (name.endsWith("_total")) {
        series.put(key, Double.parseDouble(line.substring(space + 1)));
      }
    }
    return series;
  }

  /**
   * The sum of the series of {@code source} named {@code name} whose labels include {@code labels} (pairs of label
   * name and value).
   */
  double value(String source, String name, String... labels) {
    double sum = 0;
    for (Map.Entry<String, Double> e : values.getOrDefault(source, Map.of()).entrySet()) {
      if (matches(e.getKey(), name, labels)) {
        sum += e.getValue();
      }
    }
    return sum;
  }

  /** Series whose value differs from {@code before}, in source order. */
  List<Change> changesSince(MetricsSnapshot before) {
    List<Change> changes = new java.util.ArrayList<>();
    values.forEach((source, series) -> series.forEach((key, after) -> {
      double old = before.values.getOrDefault(source, Map.of()).getOrDefault(key, 0.0);
      if (old != after) {
        changes.add(new Change(source, key, old, after));
      }
    }));
    return changes;
  }

  private static boolean matches(String key, String name, String... labels) {
    String keyName = key.contains("{") ? key.substring(0, key.indexOf('{')) : key;
    if (!keyName.equals(name)) {
      return false;
    }
    Map<String, String> have = new LinkedHashMap<>();
    Matcher m = LABEL.matcher(key);
    while (m.find()) {
      have.put(m.group(1), m.group(2));
    }
    for (int i = 0; i + 1 < labels.length; i += 2) {
      if (!labels[i + 1].equals(have.get(labels[i]))) {
        return false;
      }
    }
    return true;
  }
}
