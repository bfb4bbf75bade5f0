package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.host.OtelAgentIT;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.http.JavaHttpClientIT.RecordingServer;
import dev.fencing.agent.it.apps.ReactorNettyApp;
import dev.fencing.it.reactornetty.ReactorNettySection;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Reactor Netty HttpClient hook against real JDK HttpServers (one fenced, one not) and a real etcd, in a forked
 * application JVM per (JDK, Reactor Netty version): the oldest (1.2.16, Netty 4.1) and the latest (1.3.7, Netty 4.2)
 * supported release on Java 17 and 25, and Spring WebClient (Spring Framework 6.2) on the oldest. The requests are
 * assembled on the application's thread and sent from Netty's event loop; a declared section's scope must reach the
 * event loop with them.
 */
class ReactorNettyIT {
  static final String SECTION = ReactorNettySection.class.getName() + "#send@rn-section";

  static List<String> versions() {
    String v = System.getProperty("fencing.it.reactor.netty.versions");
    if (v == null || v.isBlank()) {
      throw new IllegalStateException("fencing.it.reactor.netty.versions is not set: run through Maven "
          + "(mvn verify -pl agent/jar -am), whose reactor-netty-range execution copies the jars");
    }
    return Arrays.asList(v.split(","));
  }

  static Stream<Arguments> matrix() {
    List<Arguments> runs = new ArrayList<>();
    for (Path home : AgentProcesses.javaHomes()) {
      for (String v : versions()) {
        runs.add(Arguments.of(home, v));
      }
    }
    return runs.stream();
  }

  /** The jars of one version (target/reactor-netty/<version>), plus Spring WebClient's with the oldest. */
  static String classpath(String version) throws IOException {
    Path dir = Path.of(System.getProperty("fencing.it.reactor.netty", "target/reactor-netty")).resolve(version);
    List<Path> dirs = new ArrayList<>(List.of(dir));
    if (version.equals(versions().get(0))) {
      dirs.add(Path.of(System.getProperty("fencing.it.spring.webflux")));
    }
    List<String> jars = new ArrayList<>();
    for (Path d : dirs) {
      if (!Files.isDirectory(d)) {
        throw new IllegalStateException(d + " is missing: the reactor-netty-range execution of agent/jar copies it");
      }
      try (Stream<Path> s = Files.list(d)) {
        s.filter(p -> p.toString().endsWith(".jar")).sorted().forEach(p -> jars.add(p.toString()));
      }
    }
    return AgentProcesses.appClasspath() + File.pathSeparator + String.join(File.pathSeparator, jars);
  }

  private static String sectionToken(int port, String state) {
    String body = Http.awaitStatus(port, "\"lock\":\"rn-section\",\"scope\":\"sections\",\"state\":\"" + state + "\"",
        Duration.ofSeconds(15));
    Matcher m = Pattern.compile("\"lock\":\"rn-section\",\"scope\":\"sections\",\"state\":\"" + state
        + "\",\"token\":(\\d+)").matcher(body);
    assertThat(m.find()).as(body).isTrue();
    return m.group(1);
  }

  @ParameterizedTest(name = "{1} on {0}")
  @MethodSource("matrix")
  void everyAttemptCarriesThePairOnceAndUnsafeRequestsFailTheirMonoAfterExpiryUnlessFencedOrExempt(Path javaHome,
      String version) throws Exception {
    boolean webClient = version.equals(versions().get(0));
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer open = new RecordingServer();
        RecordingServer fenced = new RecordingServer();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome)
            .name("reactor-netty-" + version + "-java" + AgentProcesses.javaVersion(javaHome))
            .agentArgs("lock=rn,sections=" + SECTION + ",lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port
                + ",fenced.http=127.0.0.1:" + fenced.server.getAddress().getPort() + ",exempt.http=localhost"
                + ",etcd.endpoints=" + etcd.endpoints())
            .classpath(classpath(version)).mainClass(ReactorNettyApp.class.getName()).start()) {
      app.awaitOutput("APP STARTED", Duration.ofSeconds(30));
      assertThat(app.output()).contains("Reactor Netty " + version + " from ");
      AppStdin stdin = AppStdin.http(app);
      String token = Http.jsonField(Http.awaitStatus(port, "{\"lock\":\"rn\",\"state\":\"HOLDING\"",
          Duration.ofSeconds(15)), "token");
      String sectionToken = sectionToken(port, "HOLDING");
      String pair = "token=[" + token + "] lock=[rn]";
      String ok = "STATUS 200";
      String exemptUrl = "http://localhost:" + open.server.getAddress().getPort();

      // Holding: every attempt (first, redirected) carries the JVM-wide pair exactly once, whichever thread
      // subscribes; inside the section, its own lock's pair, although the request leaves from the event loop.
      assertThat(stdin.run("BLOCK POST " + open.base() + "/ok")).isEqualTo(ok);
      assertThat(stdin.run("BLOCK PUT " + open.base() + "/ok")).isEqualTo(ok);
      assertThat(stdin.run("SUBSCRIBE POST " + open.base() + "/ok")).isEqualTo(ok);
      assertThat(stdin.run("BLOCK GET " + open.base() + "/redirect")).isEqualTo(ok);
      assertThat(stdin.run("SECTION POST " + open.base() + "/ok")).isEqualTo(ok);
      List<String> expected = new ArrayList<>(List.of("POST /ok " + pair, "PUT /ok " + pair, "POST /ok " + pair,
          "GET /redirect " + pair, "GET /ok " + pair, "POST /ok token=[" + sectionToken + "] lock=[rn-section]"));
      if (webClient) {
        assertThat(stdin.run("WEBCLIENT POST " + open.base() + "/ok")).isEqualTo(ok);
        expected.add("POST /ok " + pair);
      }
      assertThat(open.received).containsExactlyElementsOf(expected);

      // Lease lost (etcd gone, local deadline passed), the section's lock as well.
      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"lock\":\"rn\",\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      sectionToken(port, "EXPIRED");
      open.received.clear();
      String blocked = "dev.fencing.agent.bootstrap.FencingBlockedException: Fencing Agent blocked a http side "
          + "effect: lock 'rn', token " + token + ": the lease expired (local deadline passed)";

      // Unfenced host: unsafe requests never leave the process, their Mono fails with the block (block() rethrows
      // it, a subscriber gets it on the event loop as onError); reads go out untagged.
      assertThat(stdin.run("BLOCK POST " + open.base() + "/ok")).isEqualTo("ERR " + blocked);
      assertThat(stdin.run("SUBSCRIBE PUT " + open.base() + "/ok")).isEqualTo("ERR " + blocked + " on the event loop");
      assertThat(stdin.run("SECTION POST " + open.base() + "/ok"))
          .startsWith("ERR dev.fencing.agent.bootstrap.FencingBlockedException: Fencing Agent blocked a http side effect: lock 'rn-section', token "
              + sectionToken + ":");
      if (webClient) {
        assertThat(stdin.run("WEBCLIENT POST " + open.base() + "/ok"))
            .isEqualTo("ERR org.springframework.web.reactive.function.client.WebClientRequestException <- " + blocked);
      }
      assertThat(stdin.run("BLOCK GET " + open.base() + "/ok")).isEqualTo(ok);
      // Exempt destination (fencing.exempt.http=localhost): sent, untagged.
      assertThat(stdin.run("BLOCK POST " + exemptUrl + "/ok")).isEqualTo(ok);
      assertThat(open.received).containsExactly("GET /ok token=null lock=null", "POST /ok token=null lock=null");

      // Fenced service: the POST goes out with the last token and the fence's 409 reaches the application.
      assertThat(stdin.run("BLOCK POST " + fenced.base() + "/stale")).isEqualTo("STATUS 409");
      assertThat(fenced.received).containsExactly("POST /stale " + pair);

      // Unsafe attempts, counted once each: tagged while holding (POST, PUT, the subscribed POST, WebClient's POST),
      // blocked after expiry (the same), one exempt, one sent to the fence and rejected; the section's under its lock.
      int n = webClient ? 4 : 3;
      String metrics = Http.get("http://127.0.0.1:" + port + "/metrics");
      assertThat(metrics)
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"rn\",outcome=\"tagged\"} " + n + ".0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"rn\",outcome=\"blocked\"} "
              + (n - 1) + ".0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"true\",lock=\"rn\",outcome=\"tagged\"} 1.0")
          .contains("fencing_rejections_total{channel=\"http\",lock=\"rn\",reason=\"stale_token\"} 1.0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"rn-section\",outcome=\"tagged\"} 1.0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"rn-section\",outcome=\"blocked\"} 1.0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"rn\",outcome=\"exempt\"} 1.0");
      assertThat(app.output()).doesNotContain("Exception in thread");
    }
  }

  /**
   * The OpenTelemetry Java agent, which instruments Reactor Netty's HttpClient too (its response receivers, its
   * connect), attached before this one, as in OtelAgentIT: each request still carries the pair exactly once, and a
   * blocked one still fails its Mono.
   */
  @Test
  void withTheOpenTelemetryAgentAttachedFirstTheHookStillTagsAndBlocks() throws Exception {
    String latest = versions().get(versions().size() - 1);
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer open = new RecordingServer();
        AgentJvm app = AgentJvm.builder().noAgent().name("reactor-netty-otel")
            .jvmArg("-javaagent:" + OtelAgentIT.otelAgent())
            .jvmArg("-javaagent:" + Path.of(System.getProperty("fencing.agent.jar")).toAbsolutePath()
                + "=lock=rn,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port + ",etcd.endpoints="
                + etcd.endpoints())
            .sysProp("otel.javaagent.extensions", OtelAgentIT.otelExtension().toString())
            .sysProp("otel.traces.exporter", "none").sysProp("otel.metrics.exporter", "none")
            .sysProp("otel.logs.exporter", "none")
            .classpath(classpath(latest)).mainClass(ReactorNettyApp.class.getName()).start()) {
      app.awaitOutput("APP STARTED", Duration.ofSeconds(40));
      AppStdin stdin = AppStdin.http(app);
      String token = Http.jsonField(Http.awaitStatus(port, "{\"lock\":\"rn\",\"state\":\"HOLDING\"",
          Duration.ofSeconds(20)), "token");
      assertThat(stdin.run("BLOCK POST " + open.base() + "/ok")).isEqualTo("STATUS 200");
      assertThat(stdin.run("SUBSCRIBE POST " + open.base() + "/ok")).isEqualTo("STATUS 200");
      assertThat(open.received).containsExactly("POST /ok token=[" + token + "] lock=[rn]",
          "POST /ok token=[" + token + "] lock=[rn]");

      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"lock\":\"rn\",\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      assertThat(stdin.run("BLOCK POST " + open.base() + "/ok"))
          .startsWith("ERR dev.fencing.agent.bootstrap.FencingBlockedException: Fencing Agent blocked a http side "
              + "effect: lock 'rn', token " + token + ":");
      assertThat(open.received).hasSize(2);
    }
  }

  /** fencing.instrumentation.reactor-netty.enabled=false: the client runs as without the agent. */
  @Test
  void theSwitchLeavesTheClientAlone() throws Exception {
    String latest = versions().get(versions().size() - 1);
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer open = new RecordingServer();
        AgentJvm app = AgentJvm.builder().name("reactor-netty-off")
            .agentArgs("lock=rn,instrumentation.reactor-netty.enabled=false,http.port=" + port
                + ",etcd.endpoints=" + etcd.endpoints())
            .classpath(classpath(latest)).mainClass(ReactorNettyApp.class.getName()).start()) {
      app.awaitOutput("APP STARTED", Duration.ofSeconds(30));
      AppStdin stdin = AppStdin.http(app);
      Http.awaitStatus(port, "{\"lock\":\"rn\",\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      assertThat(stdin.run("BLOCK POST " + open.base() + "/ok")).isEqualTo("STATUS 200");
      assertThat(open.received).containsExactly("POST /ok token=null lock=null");
    }
  }
}
