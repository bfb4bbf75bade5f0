package dev.fencing.demo;

import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code --prometheus}: a real Prometheus (Debian's {@code /usr/bin/prometheus}) scraping every process of the demo
 * each second and evaluating the project's alert rules ({@code dashboards/prometheus/fencing-alerts.yaml}), so that
 * the stale-write alert can be seen firing, as an SRE would be paged.
 */
final class PrometheusRun implements AutoCloseable {
  static final Path BINARY = Path.of("/usr/bin/prometheus");
  /** The stale-write alerts: as the writer's agent saw the rejections, and as the fences counted them. */
  private static final String ALERT = "FencingStaleWriteRejected";
  private static final String FENCE_ALERT = "FencingStaleWriteRejectedAtFence";
  private static final Pattern FIRING = Pattern.compile("\\{\"metric\":\\{([^}]*)\\}");
  private static final Pattern LABEL = Pattern.compile("\"(\\w+)\":\"([^\"]*)\"");

  private final Process process;
  private final Path dir;
  private final int port;
  private final Console console;
  private final List<String> firing = new ArrayList<>();

  private PrometheusRun(Process process, Path dir, int port, Console console) {
    this.process = process;
    this.dir = dir;
    this.port = port;
    this.console = console;
  }

  static PrometheusRun start(DemoOptions options, Apps.Worker a, Apps.Worker b, Apps apps, Console console) {
    if (!Files.isExecutable(BINARY)) {
      throw new StoryBroken(BINARY + " is missing: install it with `apt-get install -y prometheus` (Debian), or run"
          + " the demo without --prometheus");
    }
    try {
      Path dir = Files.createTempDirectory("fencing-demo-prometheus-");
      Path config = dir.resolve("prometheus.yml");
      Files.writeString(config, String.join("\n",
          "global: {scrape_interval: 1s, evaluation_interval: 1s}",
          "rule_files: ['" + options.alertRules().toAbsolutePath().normalize() + "']",
          "scrape_configs:",
          job("ledger-worker", "/metrics", a.name(), a.statusPort(), b.name(), b.statusPort()),
          job("inventory-service", "/metrics", "inventory-service", apps.serviceAgentPort),
          job("inventory-fence", "/fence-metrics", "inventory-service", apps.servicePort),
          job("audit-consumer", "/metrics", "audit-consumer", apps.consumerMetricsPort),
          ""));
      int port = Ports.freePort();
      Process process = new ProcessBuilder(BINARY.toString(), "--config.file=" + config,
          "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port)
          .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
      PrometheusRun run = new PrometheusRun(process, dir, port, console);
      Ports.awaitOpen(port, java.time.Duration.ofSeconds(20));
      console.say("Prometheus is up on http://127.0.0.1:" + port + ", scraping every process each second, with the"
          + " alert rules of dashboards/prometheus/fencing-alerts.yaml.");
      return run;
    } catch (IOException e) {
      throw new StoryBroken("cannot start Prometheus: " + e.getMessage(), e);
    }
  }

  /** A scrape job; each target's instance label is the process's name instead of its address, for readability. */
  private static String job(String name, String path, Object... instancesAndPorts) {
    StringBuilder configs = new StringBuilder();
    for (int i = 0; i < instancesAndPorts.length; i += 2) {
      configs.append(i == 0 ? "" : ", ").append("{targets: ['127.0.0.1:").append(instancesAndPorts[i + 1])
          .append("'], labels: {instance: ").append(instancesAndPorts[i]).append("}}");
    }
    return "  - {job_name: " + name + ", metrics_path: " + path + ", static_configs: [" + configs + "]}";
  }

  /**
   * Waits until the stale-write alert fires both as the stale worker's agent saw it (its rejections) and as a fence
   * saw it, and prints the firing alerts.
   */
  void awaitStaleWriteAlerts() {
    console.say("Waiting for Prometheus to fire " + ALERT + " and " + FENCE_ALERT
        + " (it evaluates the rules every second) ...");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
    List<String> alerts = List.of();
    while (System.nanoTime() < deadline) {
      alerts = firingAlerts();
      if (alerts.stream().anyMatch(s -> s.contains("observed_by=agent"))
          && alerts.stream().anyMatch(s -> s.contains("observed_by=fence"))) {
        break;
      }
      Story.pause(500);
    }
    firing.addAll(alerts);
    if (alerts.isEmpty()) {
      console.say(ALERT + " and " + FENCE_ALERT + " did not fire within 45 s; see " + dir.resolve("prometheus.log"));
      return;
    }
    console.say("Firing (http://127.0.0.1:" + port + "/alerts):");
    alerts.forEach(s -> console.line("          " + s));
  }

  /** The alerts seen firing by {@link #awaitStaleWriteAlerts()}, one line of labels each. */
  List<String> firing() {
    return firing;
  }

  private List<String> firingAlerts() {
    String query = "ALERTS{alertname=~\"" + ALERT + "|" + FENCE_ALERT + "\",alertstate=\"firing\"}";
    String body;
    try {
      body = Http.get("http://127.0.0.1:" + port + "/api/v1/query?query="
          + URLEncoder.encode(query, StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      return List.of();
    }
    List<String> alerts = new ArrayList<>();
    Matcher m = FIRING.matcher(body);
    while (m.find()) {
      StringBuilder labels = new StringBuilder();
      Matcher l = LABEL.matcher(m.group(1));
      while (l.find()) {
        if (!l.group(1).equals("__name__") && !l.group(1).equals("alertstate") && !l.group(1).equals("severity")) {
          labels.append(labels.length() == 0 ? "" : " ").append(l.group(1)).append('=').append(l.group(2));
        }
      }
      alerts.add(labels.toString());
    }
    alerts.sort(Comparator.naturalOrder());
    return alerts;
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // A temporary directory left behind is harmless.
    }
  }

  @Override
  public String toString() {
    return "Prometheus on 127.0.0.1:" + port;
  }
}
