package dev.fencing.dashboards;

import dev.fencing.agent.metrics.AgentMetrics;
import dev.fencing.agent.metrics.FencingSeries;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.token.HighestTokenStore;
import dev.fencing.agent.token.TokenState;
import dev.fencing.fence.http.FenceMetrics;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metrics the agent, the HTTP fence and the outbox relay really export, scraped from their real registries: what the dashboards
 * and rules may refer to. Scrape jobs add {@code job} and {@code instance}; deployments add {@code cluster} and
 * {@code namespace} (Kubernetes relabelling, or Prometheus' external labels), which the alert rules keep.
 */
final class Exposition {
  static final Set<String> SCRAPE_LABELS = Set.of("job", "instance", "cluster", "namespace");

  record Sample(String name, Map<String, String> labels, double value) {
  }

  private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+\\d+)?$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  private Exposition() {
  }

  /** An agent's /metrics for lock {@code lock}: holding with {@code token}, or a standby that never held (token 0). */
  static String agent(String lock, long token) {
    TokenState state = new TokenState(lock, Long.MAX_VALUE, HighestTokenStore.none());
    state.standby("campaigning");
    if (token > 0) {
      state.granted(token, 1, 7, System.nanoTime() + TimeUnit.HOURS.toNanos(1));
    }
    // The destinations its side effects reached: one unfenced topic (the readiness report's inventory).
    dev.fencing.agent.instrumentation.api.DestinationInventory inventory =
        new dev.fencing.agent.instrumentation.api.DestinationInventory();
    inventory.record(inventory.kafka("events"), false, dev.fencing.agent.bootstrap.Decision.tag(lock, 1));
    List<FencingSeries.Series> series = new ArrayList<>(FencingSeries.of(state, new SideEffectCounters(),
        new RejectionCounters()));
    series.add(FencingSeries.destinations(List.of(lock), inventory));
    return new AgentMetrics(series, new dev.fencing.agent.metrics.CoordinatorLatency(lock)).scrape();
  }

  /** An outbox relay's exposition for table {@code table} (it runs under a job of its own). */
  static String outboxRelay(String table) {
    return dev.fencing.outbox.RelayExposition.of(table);
  }

  /** The HTTP fence's exposition for one guarded lock. */
  static String httpFence(String lock) {
    return new FenceMetrics("http", List.of(lock)).prometheusText();
  }

  static List<Sample> parse(String text) {
    List<Sample> out = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = LINE.matcher(line.trim());
      if (!m.matches()) {
        throw new IllegalArgumentException("unparsable exposition line: " + line);
      }
      Map<String, String> labels = new LinkedHashMap<>();
      if (m.group(2) != null) {
        Matcher l = LABEL.matcher(m.group(2));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      out.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
    }
    return out;
  }

  /** Metric name -> label name -> values seen, over the real agent and fence expositions. */
  static Map<String, Map<String, Set<String>>> catalog() {
    Map<String, Map<String, Set<String>>> names = new TreeMap<>();
    List<Sample> all = new ArrayList<>(parse(agent("ledger", 42)));
    all.addAll(parse(httpFence("ledger")));
    all.addAll(parse(outboxRelay("outbox")));
    for (Sample s : all) {
      Map<String, Set<String>> labels = names.computeIfAbsent(s.name(), k -> new TreeMap<>());
      s.labels().forEach((k, v) -> labels.computeIfAbsent(k, x -> new TreeSet<>()).add(v));
    }
    names.replaceAll((k, v) -> Collections.unmodifiableMap(v));
    return Collections.unmodifiableMap(names);
  }

  /** Counters, and the cumulative parts of a histogram (which grow like counters). */
  static boolean isCounter(String name) {
    return name.endsWith("_total") || name.endsWith("_bucket") || name.endsWith("_count") || name.endsWith("_sum");
  }
}
