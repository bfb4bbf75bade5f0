package dev.fencing.agent.it.metrics;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.http.RecordingServer;
import dev.fencing.agent.it.apps.HttpApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The OTLP export from a real agent-attached JVM to a receiver that decodes the real protobuf payloads: the series of
 * the Prometheus endpoint under the same names and attributes, the export itself never fenced (not tagged while the
 * lease is held, not blocked after it is released), and a last export at shutdown.
 */
class OtlpExportIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /**
   * Reading the standard environment is the agent's own logic, the same on every Java: this build's (the export runs
   * on both).
   */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  /** One decoded export request. */
  record Export(String path, Map<String, String> headers, Map<String, String> resource, Map<String, Metric> metrics) {
    /** The value of the point of {@code metric} whose attributes are exactly {@code attributes} ("k=v,k=v", sorted). */
    double value(String metric, String attributes) {
      Metric m = metrics.get(metric);
      if (m == null) {
        return Double.NaN;
      }
      List<NumberDataPoint> points = m.hasSum() ? m.getSum().getDataPointsList() : m.getGauge().getDataPointsList();
      for (NumberDataPoint p : points) {
        if (attributes(p.getAttributesList()).equals(attributes)) {
          return p.hasAsInt() ? p.getAsInt() : p.getAsDouble();
        }
      }
      return Double.NaN;
    }
  }

  static String attributes(List<KeyValue> kvs) {
    return kvs.stream().map(kv -> kv.getKey() + "=" + text(kv.getValue())).sorted().collect(Collectors.joining(","));
  }

  static String text(AnyValue v) {
    return v.hasStringValue() ? v.getStringValue() : v.toString().trim();
  }

  /** An OTLP/HTTP receiver: decodes every POST as ExportMetricsServiceRequest and answers as a collector does. */
  static final class Receiver implements AutoCloseable {
    final HttpServer server;
    final List<Export> exports = new CopyOnWriteArrayList<>();
    final List<String> errors = new CopyOnWriteArrayList<>();

    Receiver() throws IOException {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.createContext("/", ex -> {
        try {
          Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
          ex.getRequestHeaders().forEach((k, v) -> headers.put(k, String.join(",", v)));
          ExportMetricsServiceRequest req = ExportMetricsServiceRequest.parseFrom(ex.getRequestBody().readAllBytes());
          for (ResourceMetrics rm : req.getResourceMetricsList()) {
            Map<String, String> resource = new TreeMap<>();
            rm.getResource().getAttributesList().forEach(kv -> resource.put(kv.getKey(), text(kv.getValue())));
            Map<String, Metric> metrics = new TreeMap<>();
            for (ScopeMetrics sm : rm.getScopeMetricsList()) {
              sm.getMetricsList().forEach(m -> metrics.put(m.getName(), m));
            }
            exports.add(new Export(ex.getRequestURI().getPath(), headers, resource, metrics));
          }
          byte[] body = ExportMetricsServiceResponse.getDefaultInstance().toByteArray();
          ex.getResponseHeaders().set("Content-Type", "application/x-protobuf");
          ex.sendResponseHeaders(200, body.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
          }
        } catch (Exception e) {
          errors.add(e.toString());
          ex.sendResponseHeaders(400, -1);
        } finally {
          ex.close();
        }
      });
      server.start();
    }

    String base() {
      return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    Export await(String what, Predicate<Export> condition, Duration timeout) {
      long end = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < end) {
        for (int i = exports.size() - 1; i >= 0; i--) {
          if (condition.test(exports.get(i))) {
            return exports.get(i);
          }
        }
        sleep(50);
      }
      throw new AssertionError("no export " + what + " within " + timeout + "; " + exports.size() + " received, errors "
          + errors + (exports.isEmpty() ? "" : "; last: " + exports.get(exports.size() - 1)));
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void exportsTheSameSeriesUnfencedAndFlushesAtShutdown(Path javaHome) throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); Receiver receiver = new Receiver();
        RecordingServer open = new RecordingServer();
        AgentJvm app = start(javaHome, "otlp", port, etcd, "otlp.endpoint=" + receiver.base()
            + ",otlp.interval=300ms,otlp.headers=X-Tenant=t1", Map.of())) {
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      Export holding = receiver.await("with the lease held", e -> e.value("fencing_lease_held", "lock=otlp") == 1,
          Duration.ofSeconds(10));
      assertThat(holding.path()).isEqualTo("/v1/metrics");
      assertThat(holding.headers()).containsEntry("Content-Type", "application/x-protobuf")
          .containsEntry("X-Tenant", "t1");
      assertThat(holding.resource()).containsEntry("service.instance.id", hostname() + "/" + app.pid())
          .containsKey("service.name");
      assertThat(holding.metrics().keySet()).containsExactlyInAnyOrder("fencing_lease_held",
          "fencing_lease_remaining_seconds", "fencing_token", "fencing_token_headroom_ratio",
          "fencing_lease_acquisitions", "fencing_lease_losses", "fencing_side_effects", "fencing_rejections",
          "fencing_token_reuse", "fencing_token_overflow", "fencing_hook_failures", "fencing_agent_state",
          "fencing_build_info", "fencing_coordinator_request_duration_seconds", "fencing_side_effects_blocked",
          "fencing_destinations");
      assertThat(holding.value("fencing_agent_state", "lock=otlp,state=holding")).isEqualTo(1);
      assertThat(holding.value("fencing_agent_state", "lock=otlp,state=failed")).isZero();
      assertThat(holding.metrics().get("fencing_build_info").getGauge().getDataPoints(0).getAsInt()).isEqualTo(1);
      assertThat(attributes(holding.metrics().get("fencing_build_info").getGauge().getDataPoints(0).getAttributesList()))
          .matches("coordinator=etcd,java=\\d+[^,]*,lock=otlp,version=\\d+\\.\\d+\\.\\d+.*");
      Metric latency = holding.metrics().get("fencing_coordinator_request_duration_seconds");
      assertThat(latency.getUnit()).isEqualTo("s");
      assertThat(latency.getHistogram().getDataPointsList())
          .filteredOn(p -> attributes(p.getAttributesList()).equals("lock=otlp,op=grant"))
          .singleElement().satisfies(p -> assertThat(p.getCount()).isGreaterThanOrEqualTo(1));
      assertThat(holding.value("fencing_token", "lock=otlp")).isEqualTo(Long.parseLong(token));
      assertThat(holding.value("fencing_lease_remaining_seconds", "lock=otlp")).isBetween(0.1, 3.0);
      assertThat(holding.metrics().get("fencing_lease_remaining_seconds").getUnit()).isEqualTo("s");
      assertThat(holding.metrics().get("fencing_token_headroom_ratio").getUnit()).isEqualTo("1");
      assertThat(holding.value("fencing_lease_acquisitions", "lock=otlp")).isEqualTo(1);
      Metric effects = holding.metrics().get("fencing_side_effects");
      assertThat(effects.getSum().getIsMonotonic()).isTrue();
      assertThat(effects.getSum().getAggregationTemporality())
          .isEqualTo(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE);
      assertThat(effects.getSum().getDataPointsCount()).as("every known combination, from the start: 3 channels x fenced or not x 5 outcomes").isEqualTo(30);
      assertThat(holding.metrics().get("fencing_rejections").getSum().getDataPointsCount()).as("3 channels x 3 reasons (stale, missing, replayed)").isEqualTo(9);
      assertThat(holding.metrics().get("fencing_lease_losses").getSum().getDataPointsList())
          .extracting(p -> attributes(p.getAttributesList()))
          .containsExactlyInAnyOrder("lock=otlp,reason=keepalive_failed", "lock=otlp,reason=lease_revoked",
              "lock=otlp,reason=key_deleted", "lock=otlp,reason=deadline_passed");

      AppStdin stdin = AppStdin.http(app);
      assertThat(stdin.run("SEND POST " + open.base() + "/ok")).startsWith("STATUS 200");
      assertThat(open.received).containsExactly("POST /ok token=[" + token + "] lock=[otlp]");
      String tagged = "channel=http,fenced=false,lock=otlp,outcome=tagged";
      receiver.await("counting the tagged POST", e -> e.value("fencing_side_effects", tagged) == 1,
          Duration.ofSeconds(10));

      // Main returns; the shutdown hook releases the lease, then flushes: the last export says so, and it went out
      // although the application's own POSTs would now be blocked (standby).
      app.process().getOutputStream().close();
      assertThat(app.awaitExit(Duration.ofSeconds(10))).isZero();
      Export last = receiver.exports.get(receiver.exports.size() - 1);
      assertThat(last.value("fencing_lease_held", "lock=otlp")).isZero();
      assertThat(last.value("fencing_side_effects", tagged)).isEqualTo(1);
      // The agent's own POSTs: never tagged, even while the lease was held, and never counted.
      assertThat(receiver.exports).allSatisfy(e -> assertThat(e.headers()).doesNotContainKeys("Fencing-Token", "Fencing-Lock"));
      assertThat(last.value("fencing_side_effects", "channel=http,fenced=false,lock=otlp,outcome=blocked")).isZero();
      assertThat(last.value("fencing_side_effects_blocked",
          "channel=http,fenced=false,lock=otlp,outcome=blocked,reason=standby")).isZero();
      assertThat(receiver.errors).isEmpty();
    }
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void standardOpenTelemetryEnvironmentConfiguresTheExport(Path javaHome) throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); Receiver receiver = new Receiver();
        AgentJvm app = start(javaHome, "otel-env", port, etcd, "", Map.of(
            "OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base(),
            "OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20t0k3n",
            "OTEL_METRIC_EXPORT_INTERVAL", "300",
            "OTEL_SERVICE_NAME", "ledger-worker"))) {
      Export e = receiver.await("with the lease held", x -> x.value("fencing_lease_held", "lock=otlp") == 1,
          Duration.ofSeconds(20));
      assertThat(e.path()).isEqualTo("/v1/metrics");
      assertThat(e.headers()).containsEntry("Authorization", "Bearer t0k3n");
      assertThat(e.resource()).containsEntry("service.name", "ledger-worker");
      assertThat(app.output()).contains("[fencing-agent] INFO OTLP metrics export to " + receiver.base()
          + "/v1/metrics every 300 ms (from environment variable OTEL_EXPORTER_OTLP_ENDPOINT)");
    }
  }

  private static AgentJvm start(Path javaHome, String name, int port, EtcdCluster etcd, String args,
      Map<String, String> env) {
    AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
        .agentArgs("lock=otlp,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port + ",etcd.endpoints="
            + etcd.endpoints() + (args.isEmpty() ? "" : "," + args))
        .classpath(AgentProcesses.appClasspath()).mainClass(HttpApp.class.getName());
    env.forEach(b::env);
    AgentJvm app = b.start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    return app;
  }

  private static String hostname() {
    String host = System.getenv("HOSTNAME");
    if (host == null || host.isBlank()) {
      try {
        host = java.nio.file.Files.readString(Path.of("/etc/hostname")).trim();
      } catch (IOException e) {
        host = "localhost";
      }
    }
    return host;
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
