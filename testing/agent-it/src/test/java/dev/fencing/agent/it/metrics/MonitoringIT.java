package dev.fencing.agent.it.metrics;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.jdbc.JdbcIT.JdbcJvm;
import dev.fencing.agent.it.apps.DownstreamServiceApp;
import dev.fencing.agent.it.http.RecordingServer;
import dev.fencing.fence.sql.OutboxInstaller;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.SqlOutbox;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.Ports;
import java.io.File;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The monitoring story live: a real Prometheus (Debian's) scrapes two agent-attached workers, an HTTP fence and an
 * outbox relay (delivering the first holder's webhook event) through a takeover in which the resumed old holder's
 * write is rejected by the database; the project's alert rules fire FencingStaleWriteRejected, and every query of the
 * project's Grafana dashboards returns data.
 */
class MonitoringIT {
  private static final Pattern EXPR = Pattern.compile("\"expr\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

  @Test
  void prometheusSeesTheTakeoverFiresTheStaleWriteAlertAndEveryDashboardQueryHasData() throws Exception {
    Path prometheusBinary = Path.of("/usr/bin/prometheus");
    if (!Files.isExecutable(prometheusBinary)) {
      throw new IllegalStateException("no Prometheus at /usr/bin/prometheus: install it with "
          + "'apt-get install -y prometheus' (scripts/prerequisites.sh does)");
    }
    Path dashboards = Path.of(System.getProperty("fencing.dashboards.dir", "../../dashboards")).toAbsolutePath().normalize();
    Path javaHome = AgentProcesses.javaHomes().get(0);
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
        s.execute("INSERT INTO account VALUES (1, 0)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("account"), "ledger", false, false));
        s.execute("CREATE TABLE ledger (id SERIAL PRIMARY KEY, amount INT NOT NULL)"); // the fence app's table
        new OutboxInstaller(c).install(new SqlOutbox(TableName.parse("outbox"), "ledger"));
      }
      String args = "lock=ledger,lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints=" + etcd.endpoints();
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar");
      try (RecordingServer webhook = new RecordingServer("Idempotency-Key");
          AgentJvm relay = AgentJvm.builder().name("monitored-relay").noAgent()
              .executableJar(Path.of(System.getProperty("fencing.agent.jar")))
              .args("outbox", "relay", "--jdbc-url", url, "--driver-jar", System.getProperty("fencing.it.postgresql.jar"),
                  "--table", "outbox", "--poll-interval", "1s", "--metrics-port", "0")
              .start();
          JdbcJvm a = new JdbcJvm(javaHome, "monitored-a", args, url, cp);
          AgentJvm fence = AgentJvm.builder().javaHome(javaHome).name("monitored-fence").noAgent()
              .classpath(AgentProcesses.appClasspath() + File.pathSeparator + AgentProcesses.libraries("jetty-",
                  "jakarta.servlet-api", "slf4j-api", "HikariCP", "postgresql", "fencing-fence-http",
                  "fencing-fence-store", "fencing-protocol", "fencing-fence-sql"))
              .mainClass(DownstreamServiceApp.class.getName()).args(url).start()) {
        Matcher ports = Pattern.compile("APP STARTED jdk=(\\d+)").matcher(fence.awaitOutput("APP STARTED", Duration.ofSeconds(30)));
        assertThat(ports.find()).isTrue();
        Http.awaitStatus(a.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
        Matcher relayPort = Pattern.compile("metrics on http://0\\.0\\.0\\.0:(\\d+)/metrics")
            .matcher(relay.awaitOutput("/metrics", Duration.ofSeconds(20)));
        assertThat(relayPort.find()).isTrue();
        try (JdbcJvm b = new JdbcJvm(javaHome, "monitored-b", args, url, cp);
            Prometheus prometheus = Prometheus.start(prometheusBinary, dashboards.resolve("prometheus/fencing-alerts.yaml"),
                List.of("127.0.0.1:" + a.port, "127.0.0.1:" + b.port), "127.0.0.1:" + ports.group(1),
                "127.0.0.1:" + relayPort.group(1))) {
          Http.awaitStatus(b.port, "\"state\":\"STANDBY\"", Duration.ofSeconds(15));
          assertThat(a.run("SQL UPDATE account SET balance = 100 WHERE id = 1")).isEqualTo("OK 1");
          // The holder's webhook, written to the outbox in its transaction and delivered by the relay.
          assertThat(a.run("SQL INSERT INTO outbox(channel, target, payload) VALUES ('http', '" + webhook.base()
              + "/paid', '{}')")).isEqualTo("OK 1");
          long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
          while (webhook.received.isEmpty() && System.nanoTime() < until) {
            Thread.sleep(50);
          }
          assertThat(webhook.received).as("the relay delivered the outbox event").hasSize(1);
          assertThat(webhook.received.get(0)).startsWith("POST /paid token=[").contains("lock=[ledger]");
          prometheus.awaitQueryWithData("fencing_lease_held{job=\"fencing\"} == 1", Duration.ofSeconds(20));

          a.jvm.suspend(); // a long GC pause; B takes over
          Http.awaitStatus(b.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(6));
          assertThat(b.run("SQL UPDATE account SET balance = 200 WHERE id = 1")).isEqualTo("OK 1");
          a.jvm.resume();
          assertThat(a.run("SQL UPDATE account SET balance = 666 WHERE id = 1")).startsWith("ERR FN001");

          String alerts = prometheus.awaitAlert("FencingStaleWriteRejected", Duration.ofSeconds(45));
          assertThat(alerts).contains("\"observed_by\":\"agent\"", "\"channel\":\"jdbc\"", "\"lock\":\"ledger\"");

          List<String> empty = new ArrayList<>();
          int queries = 0;
          for (String file : List.of("grafana/fencing-agent.json", "grafana/fencing-fences.json")) {
            Matcher m = EXPR.matcher(Files.readString(dashboards.resolve(file)));
            while (m.find()) {
              String expr = grafanaVariables(unescape(m.group(1)));
              queries++;
              // Within a few scrapes, not at one instant: on a loaded machine one scrape can exceed its 1 s timeout,
              // and Prometheus then marks that target's series stale until the next one succeeds.
              if (!prometheus.hasDataWithin(expr, Duration.ofSeconds(10))) {
                empty.add(file + ": " + expr);
              }
            }
          }
          assertThat(queries).isGreaterThan(10);
          assertThat(empty).as("dashboard queries without data").isEmpty();
        }
      }
    }
  }

  /** Template variables as an "All" selection: regex matchers take any value; the rate interval a short one. */
  static String grafanaVariables(String expr) {
    return expr.replace("$__rate_interval", "1m").replaceAll("\\$\\{?[A-Za-z_][A-Za-z0-9_]*\\}?", ".+");
  }

  static String unescape(String json) {
    return json.replace("\\\"", "\"").replace("\\n", "\n").replace("\\\\", "\\");
  }

  /** A Prometheus server on a free port, scraping every second and evaluating the rules every second. */
  static final class Prometheus implements AutoCloseable {
    private final Process process;
    private final Path dir;
    private final String base;

    private Prometheus(Process process, Path dir, String base) {
      this.process = process;
      this.dir = dir;
      this.base = base;
    }

    static Prometheus start(Path binary, Path rules, List<String> agents, String fence, String relay)
        throws IOException {
      Path dir = Files.createTempDirectory("fencing-prometheus");
      int port = Ports.freePort();
      String config = "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
          + "rule_files:\n  - " + rules + "\n"
          + "scrape_configs:\n"
          + "  - job_name: fencing\n    static_configs:\n      - targets: ['" + String.join("', '", agents) + "']\n"
          + "  - job_name: fence\n    metrics_path: /fence-metrics\n    static_configs:\n      - targets: ['" + fence + "']\n"
          + "  - job_name: outbox-relay\n    static_configs:\n      - targets: ['" + relay + "']\n";
      Files.writeString(dir.resolve("prometheus.yml"), config);
      Process p = new ProcessBuilder(binary.toString(), "--config.file=" + dir.resolve("prometheus.yml"),
          "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port)
          .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
      Prometheus prometheus = new Prometheus(p, dir, "http://127.0.0.1:" + port);
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (System.nanoTime() < end) {
        try {
          if (Http.get(prometheus.base + "/-/ready").contains("Ready")) {
            return prometheus;
          }
        } catch (RuntimeException notYet) {
          // starting
        }
        sleep(200);
      }
      prometheus.close();
      throw new IllegalStateException("Prometheus did not become ready; log: " + dir.resolve("prometheus.log"));
    }

    boolean hasData(String expr) {
      String body = Http.get(base + "/api/v1/query?query=" + URLEncoder.encode(expr, StandardCharsets.UTF_8));
      if (!body.contains("\"status\":\"success\"")) {
        throw new AssertionError("query failed: " + expr + "\n" + body);
      }
      return !body.contains("\"result\":[]");
    }

    boolean hasDataWithin(String expr, Duration timeout) {
      long end = System.nanoTime() + timeout.toNanos();
      while (!hasData(expr)) {
        if (System.nanoTime() > end) {
          return false;
        }
        sleep(500);
      }
      return true;
    }

    void awaitQueryWithData(String expr, Duration timeout) {
      if (!hasDataWithin(expr, timeout)) {
        throw new AssertionError("no data for " + expr + " within " + timeout + "; log: " + dir.resolve("prometheus.log"));
      }
    }

    /** The alerts JSON once {@code name} is firing. */
    String awaitAlert(String name, Duration timeout) {
      long end = System.nanoTime() + timeout.toNanos();
      while (true) {
        String alerts = Http.get(base + "/api/v1/alerts");
        if (alerts.contains("\"alertname\":\"" + name + "\"") && alerts.contains("\"state\":\"firing\"")) {
          return alerts;
        }
        if (System.nanoTime() > end) {
          throw new AssertionError(name + " did not fire within " + timeout + ": " + alerts);
        }
        sleep(500);
      }
    }

    @Override
    public void close() {
      process.destroy();
      try {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }

    private static void sleep(long millis) {
      try {
        Thread.sleep(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }
}
