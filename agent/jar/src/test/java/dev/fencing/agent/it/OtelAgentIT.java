package dev.fencing.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.apps.TracedApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Our agent beside the OpenTelemetry Java agent in one JVM, attached in either order: both work, a real server gets
 * our headers exactly once (and OpenTelemetry's traceparent), the JDBC write carries the token, and the CLIENT spans
 * the OpenTelemetry agent exports (its logging exporter, on the app's output) carry fencing.lock and fencing.token.
 */
class OtelAgentIT {
  static Stream<Arguments> runs() {
    List<Arguments> runs = new ArrayList<>();
    for (Path home : AgentProcesses.javaHomes()) {
      runs.add(Arguments.of(home, true));
      runs.add(Arguments.of(home, false));
    }
    return runs.stream();
  }

  static Path otelAgent() {
    String p = System.getProperty("fencing.it.otel.agent");
    if (p == null || !Files.isRegularFile(Path.of(p))) {
      throw new IllegalStateException("no OpenTelemetry Java agent at " + p + ": the build copies it (maven-dependency-"
          + "plugin execution opentelemetry-javaagent in agent/jar/pom.xml); run the ITs through Maven");
    }
    return Path.of(p);
  }

  /** What a user gets with {@code unzip -j fencing-agent.jar otel/fencing-otel-extension.jar}. */
  static Path otelExtension() throws java.io.IOException {
    Path file = Files.createTempFile("fencing-otel-extension", ".jar");
    try (java.util.jar.JarFile jar = new java.util.jar.JarFile(System.getProperty("fencing.agent.jar"));
        java.io.InputStream in = jar.getInputStream(jar.getEntry("otel/fencing-otel-extension.jar"))) {
      Files.copy(in, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    file.toFile().deleteOnExit();
    return file;
  }

  @ParameterizedTest(name = "{0} fencing first: {1}")
  @MethodSource("runs")
  void bothAgentsWorkInEitherOrderAndClientSpansCarryTheToken(Path javaHome, boolean fencingFirst) throws Exception {
    int port = Ports.freePort();
    List<String> received = new CopyOnWriteArrayList<>();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", ex -> {
      received.add("token=" + ex.getRequestHeaders().get("Fencing-Token") + " lock="
          + ex.getRequestHeaders().get("Fencing-Lock") + " traceparent="
          + (ex.getRequestHeaders().get("traceparent") == null ? 0 : ex.getRequestHeaders().get("traceparent").size()));
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, -1);
      ex.close();
    });
    server.start();
    String fencing = "-javaagent:" + Path.of(System.getProperty("fencing.agent.jar")).toAbsolutePath()
        + "=lock=web,http.port=" + port + ",etcd.endpoints=";
    String otel = "-javaagent:" + otelAgent();
    try (EtcdCluster etcd = EtcdCluster.single()) {
      AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome).noAgent()
          .name("otel-" + (fencingFirst ? "fencing-first" : "otel-first") + "-java" + AgentProcesses.javaVersion(javaHome))
          .sysProp("otel.traces.exporter", "logging").sysProp("otel.metrics.exporter", "none")
          .sysProp("otel.logs.exporter", "none").sysProp("otel.service.name", "traced-app")
          .classpath(AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.h2.jar"))
          .mainClass(TracedApp.class.getName())
          .args("http://127.0.0.1:" + server.getAddress().getPort() + "/write", "jdbc:h2:mem:traced;DB_CLOSE_DELAY=-1");
      if (fencingFirst) {
        // Our premain runs first and adds our extension to otel.javaagent.extensions itself.
        b.jvmArg(fencing + etcd.endpoints()).jvmArg(otel);
      } else {
        // The OpenTelemetry agent has read its settings before our premain runs: the user names the extension.
        b.jvmArg(otel).jvmArg(fencing + etcd.endpoints())
            .sysProp("otel.javaagent.extensions", otelExtension().toString());
      }
      try (AgentJvm app = b.start()) {
        app.awaitOutput("APP STARTED", Duration.ofSeconds(40));
        String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(20)), "token");
        app.process().getOutputStream().write("GO\n".getBytes(StandardCharsets.UTF_8));
        app.process().getOutputStream().flush();
        app.awaitOutput("ROW ", Duration.ofSeconds(20));
        assertThat(app.output()).contains("HTTP 200").contains("ROW " + token);
        assertThat(received).containsExactly("token=[" + token + "] lock=[web] traceparent=1");

        // The logging exporter prints one line per span: "'<name>' : <trace> <span> CLIENT [tracer: <scope>] <attrs>".
        String httpSpan = awaitSpan(app, "java-http-client");
        String jdbcSpan = awaitSpan(app, "INSERT");
        for (String span : List.of(httpSpan, jdbcSpan)) {
          assertThat(span).contains("fencing.lock=web").contains("fencing.token=" + token);
        }
      }
    } finally {
      server.stop(0);
    }
  }

  private static String awaitSpan(AgentJvm app, String marker) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < end) {
      for (String line : app.output().lines().toList()) {
        if (line.contains(" CLIENT [tracer: ") && line.contains(marker)) {
          return line;
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError("no CLIENT span line containing '" + marker + "' in:\n" + app.output());
  }
}
