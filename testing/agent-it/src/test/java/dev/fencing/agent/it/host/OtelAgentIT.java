package dev.fencing.agent.it.host;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.kafka.KafkaProducerIT;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.apps.TracedApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.Ports;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Our agent beside the OpenTelemetry Java agent in one JVM, attached in either order: both work, a real server gets our
 * headers exactly once (and OpenTelemetry's traceparent), the JDBC write carries the token, the Kafka record reaches a
 * real broker, the CLIENT and PRODUCER spans the OpenTelemetry agent exports (OTLP/HTTP, decoded here) carry
 * fencing.lock and fencing.token, and once the lease is gone each blocked call adds a fencing.blocked event to the
 * trace.
 */
public class OtelAgentIT {
  private static KafkaBroker broker;

  @BeforeAll
  static void startBroker() {
    broker = KafkaBroker.start();
    broker.createTopic("traced", 1);
  }

  @AfterAll
  static void stopBroker() {
    if (broker != null) {
      broker.close();
    }
  }

  /**
   * Each order once, each Java once: ours first on this build's Java, OpenTelemetry's first on the newest (both agents
   * weave on either Java; which of them wraps the other's advice is the order's doing, the same on every Java).
   */
  public static Stream<Arguments> runs() {
    List<Path> homes = AgentProcesses.javaHomes();
    return Stream.of(Arguments.of(homes.get(0), true), Arguments.of(homes.get(homes.size() - 1), false));
  }

  public static Path otelAgent() {
    String p = System.getProperty("fencing.it.otel.agent");
    if (p == null || !Files.isRegularFile(Path.of(p))) {
      throw new IllegalStateException("no OpenTelemetry Java agent at " + p + ": the build copies it (maven-dependency-"
          + "plugin execution opentelemetry-javaagent in agent/jar/pom.xml); run the ITs through Maven");
    }
    return Path.of(p);
  }

  /** What a user gets with {@code unzip -j fencing-agent.jar otel/fencing-otel-extension.jar}. */
  public static Path otelExtension() throws IOException {
    Path file = Files.createTempFile("fencing-otel-extension", ".jar");
    try (JarFile jar = new JarFile(System.getProperty("fencing.agent.jar"));
        InputStream in = jar.getInputStream(jar.getEntry("otel/fencing-otel-extension.jar"))) {
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
    }
    file.toFile().deleteOnExit();
    return file;
  }

  /** Spans received over OTLP/HTTP, as "name kind {attributes} events=[...]" lines. */
  public static final class TraceReceiver implements AutoCloseable {
    public final HttpServer server;
    public final List<String> spans = new CopyOnWriteArrayList<>();
    /** Exports that arrived with a Fencing-Token header: the OpenTelemetry agent's own traffic must stay untouched. */
    public final List<String> tagged = new CopyOnWriteArrayList<>();

    public TraceReceiver() throws IOException {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.createContext("/", ex -> {
        if (ex.getRequestHeaders().containsKey("Fencing-Token")) {
          tagged.add(ex.getRequestHeaders().getFirst("Fencing-Token"));
        }
        ExportTraceServiceRequest req = ExportTraceServiceRequest.parseFrom(ex.getRequestBody().readAllBytes());
        for (ResourceSpans rs : req.getResourceSpansList()) {
          for (ScopeSpans ss : rs.getScopeSpansList()) {
            for (Span s : ss.getSpansList()) {
              spans.add(s.getName() + " " + s.getKind() + " {" + attributes(s.getAttributesList()) + "} events=["
                  + s.getEventsList().stream().map(e -> e.getName() + "{" + attributes(e.getAttributesList()) + "}")
                      .collect(Collectors.joining(";")) + "]");
            }
          }
        }
        byte[] body = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
        ex.getResponseHeaders().set("Content-Type", "application/x-protobuf");
        ex.sendResponseHeaders(200, body.length);
        try (OutputStream out = ex.getResponseBody()) {
          out.write(body);
        }
      });
      server.start();
    }

    public static String attributes(List<KeyValue> kvs) {
      return kvs.stream().map(kv -> kv.getKey() + "=" + (kv.getValue().hasStringValue() ? kv.getValue().getStringValue()
          : kv.getValue().hasIntValue() ? Long.toString(kv.getValue().getIntValue()) : kv.getValue().toString().trim()))
          .sorted().collect(Collectors.joining(", "));
    }

    public String await(Predicate<String> span, String what) throws InterruptedException {
      long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (System.nanoTime() < end) {
        for (String s : spans) {
          if (span.test(s)) {
            return s;
          }
        }
        Thread.sleep(100);
      }
      throw new AssertionError("no span " + what + " among:\n" + String.join("\n", spans));
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  @ParameterizedTest(name = "{0} fencing first: {1}")
  @MethodSource("runs")
  void bothAgentsWorkInEitherOrderAndClientSpansCarryTheToken(Path javaHome, boolean fencingFirst) throws Exception {
    int status = Ports.freePort();
    int appPort = Ports.freePort();
    List<String> received = new CopyOnWriteArrayList<>();
    HttpServer downstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    downstream.createContext("/", ex -> {
      List<String> parent = ex.getRequestHeaders().get("traceparent");
      received.add("token=" + ex.getRequestHeaders().get("Fencing-Token") + " lock="
          + ex.getRequestHeaders().get("Fencing-Lock") + " traceparent=" + (parent == null ? 0 : parent.size()));
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, -1);
      ex.close();
    });
    downstream.start();
    try (EtcdCluster etcd = EtcdCluster.single(); TraceReceiver traces = new TraceReceiver()) {
      String fencing = "-javaagent:" + Path.of(System.getProperty("fencing.agent.jar")).toAbsolutePath()
          // etcd is gone when the app closes: shutdown.timeout=0s, no wait for a release that cannot land.
          + "=lock=web,lease.ttl=3s,lease.safety-margin=500ms,shutdown.timeout=0s,http.port=" + status
          + ",etcd.endpoints=" + etcd.endpoints();
      String otel = "-javaagent:" + otelAgent();
      AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome).noAgent()
          .name("otel-" + (fencingFirst ? "fencing-first" : "otel-first") + "-java" + AgentProcesses.javaVersion(javaHome))
          .sysProp("otel.traces.exporter", "otlp").sysProp("otel.exporter.otlp.protocol", "http/protobuf")
          .sysProp("otel.exporter.otlp.traces.endpoint", "http://127.0.0.1:" + traces.server.getAddress().getPort() + "/v1/traces")
          .sysProp("otel.bsp.schedule.delay", "200").sysProp("otel.metrics.exporter", "none")
          .sysProp("otel.logs.exporter", "none").sysProp("otel.service.name", "traced-app")
          .classpath(String.join(File.pathSeparator, AgentProcesses.appClasspath(), System.getProperty("fencing.it.h2.jar"),
              KafkaProducerIT.clientsJar(System.getProperty("fencing.it.kafka.clients.oldest")).toString(),
              System.getProperty("fencing.it.slf4j.jar")))
          .mainClass(TracedApp.class.getName())
          .args(Integer.toString(appPort), "http://127.0.0.1:" + downstream.getAddress().getPort() + "/write",
              "jdbc:h2:mem:traced;DB_CLOSE_DELAY=-1", broker.bootstrapServers());
      if (fencingFirst) {
        // Our premain runs first and adds our extension to otel.javaagent.extensions itself.
        b.jvmArg(fencing).jvmArg(otel);
      } else {
        // The OpenTelemetry agent has read its settings before our premain runs: the user names the extension.
        b.jvmArg(otel).jvmArg(fencing).sysProp("otel.javaagent.extensions", otelExtension().toString());
      }
      try (AgentJvm app = b.start()) {
        app.awaitOutput("APP STARTED", Duration.ofSeconds(40));
        String token = Http.jsonField(Http.awaitStatus(status, "\"state\":\"HOLDING\"", Duration.ofSeconds(20)), "token");
        String work = "http://127.0.0.1:" + appPort + "/work";

        assertThat(Http.get(work)).isEqualTo("HTTP 200\nROW " + token + "\nSENT\n");
        assertThat(received).containsExactly("token=[" + token + "] lock=[web] traceparent=1");
        String stamp = "fencing.lock=web, fencing.token=" + token;
        assertThat(traces.await(s -> s.startsWith("POST SPAN_KIND_CLIENT"), "POST CLIENT")).contains(stamp);
        assertThat(traces.await(s -> s.startsWith("INSERT") && s.contains("SPAN_KIND_CLIENT"), "INSERT CLIENT"))
            .contains(stamp);
        assertThat(traces.await(s -> s.contains("SPAN_KIND_PRODUCER"), "PRODUCER")).startsWith("traced publish")
            .contains(stamp);

        // Lease gone: both calls are blocked, and each block is an event in the request's trace.
        for (EtcdNode n : etcd.nodes()) {
          n.kill();
        }
        Http.awaitStatus(status, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
        // (HttpClient.send rethrows our FencingBlockedException as a plain IOException with its message.)
        assertThat(Http.get(work)).contains("ERR java.io.IOException: Fencing Agent blocked a http side effect")
            .contains("ERR java.sql.SQLException: Fencing Agent blocked a jdbc side effect")
            .contains("ERR java.util.concurrent.ExecutionException: org.apache.kafka.common.KafkaException: "
                + "Fencing Agent blocked a kafka side effect");
        assertThat(received).hasSize(1);
        for (String channel : List.of("http", "jdbc", "kafka")) {
          traces.await(s -> s.contains("fencing.blocked{fencing.channel=" + channel + ", fencing.fenced=false, "
              + "fencing.lock=web, fencing.reason=expired, fencing.token=" + token + "}"), "with a " + channel
              + " fencing.blocked event");
        }
        assertThat(traces.tagged).isEmpty();
      }
    } finally {
      downstream.stop(0);
    }
  }
}
