package dev.fencing.agent.it.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.apps.ReactorNettyApp;
import dev.fencing.agent.it.host.OtelAgentIT;
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
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Reactor Netty HttpClient hook, in a forked application JVM per (JDK, Reactor Netty version): the oldest (1.2.16,
 * Netty 4.1) supported release on Java 17, the latest (1.3.7, Netty 4.2) on Java 25 (the hook is woven on both; what
 * a request carries is the agent's and the library's logic, the same on every Java), and Spring WebClient (Spring
 * Framework 6.2) on the oldest. The requests are assembled on the application's thread and sent from Netty's event
 * loop: a blocked one fails its Mono (block() rethrows it, a subscriber gets it on the event loop as onError), and a
 * declared section's scope must reach the event loop with them.
 */
class ReactorNettyIT extends AbstractHttpClientIT {
  static final String SECTION = ReactorNettySection.class.getName() + "#send@rn-section";

  /** The Reactor Netty versions of testing/library-versions, oldest first. */
  static List<String> versions() {
    return AgentProcesses.libraryVersions("reactor-netty");
  }

  /** The jars of one version (testing/library-versions), plus Spring WebClient's with the oldest. */
  static String classpath(String version) throws IOException {
    Path dir = AgentProcesses.libraryJars("reactor-netty", version);
    List<Path> dirs = new ArrayList<>(List.of(dir));
    if (webClient(version)) {
      dirs.add(AgentProcesses.libraryJars("spring-webflux", AgentProcesses.libraryVersions("spring-webflux").get(0)));
    }
    List<String> jars = new ArrayList<>();
    for (Path d : dirs) {
      if (!Files.isDirectory(d)) {
        throw new IllegalStateException(d + " is missing: build testing/library-versions first (mvn install)");
      }
      try (Stream<Path> s = Files.list(d)) {
        s.filter(p -> p.toString().endsWith(".jar")).sorted().forEach(p -> jars.add(p.toString()));
      }
    }
    return AgentProcesses.appClasspath() + File.pathSeparator + String.join(File.pathSeparator, jars);
  }

  private static boolean webClient(String version) {
    return version.equals(versions().get(0));
  }

  private static String sectionToken(int port, String state) {
    String body = Http.awaitStatus(port, "\"lock\":\"rn-section\",\"scope\":\"sections\",\"state\":\"" + state + "\"",
        Duration.ofSeconds(15));
    Matcher m = Pattern.compile("\"lock\":\"rn-section\",\"scope\":\"sections\",\"state\":\"" + state
        + "\",\"token\":(\\d+)").matcher(body);
    assertThat(m.find()).as(body).isTrue();
    return m.group(1);
  }

  @Override
  protected String lock() {
    return "rn";
  }

  /** Each version once: the oldest on this build's Java, the others on the newest. */
  @Override
  protected List<Run> runs() {
    List<Run> runs = new ArrayList<>();
    for (String v : versions()) {
      Path home = webClient(v) ? AgentProcesses.javaHomes().get(0) : AgentProcesses.newestJava().get(0);
      runs.add(new Run(home, v, webClient(v) ? "with Spring WebClient" : null));
    }
    return runs;
  }

  /** A section of lock rn-section; localhost exempt (the open server, when called by that name). */
  @Override
  protected String moreAgentArgs(Run run) {
    return ",sections=" + SECTION + ",exempt.http=localhost";
  }

  @Override
  protected AgentJvm start(Run run, String agentArgs) throws IOException {
    AgentJvm app = AgentJvm.builder().javaHome(run.javaHome())
        .name("reactor-netty-" + run.version() + "-java" + AgentProcesses.javaVersion(run.javaHome()))
        .agentArgs(agentArgs).classpath(classpath(run.version())).mainClass(ReactorNettyApp.class.getName()).start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(30));
    assertThat(app.output()).contains("Reactor Netty " + run.version() + " from ");
    return app;
  }

  /** block() on the app's thread; subscribed with callbacks, the outcome taken on whichever thread signals it. */
  @Override
  protected List<String> modes(Run run) {
    return List.of("BLOCK", "SUBSCRIBE");
  }

  @Override
  protected String answered(String mode, int status) {
    return "STATUS " + status;
  }

  @Override
  protected String blocked(String mode, String message) {
    return super.blocked(mode, message) + (mode.equals("SUBSCRIBE") ? " on the event loop" : "");
  }

  @Override
  protected List<Redirect> redirects(Run run) {
    return List.of(new Redirect("BLOCK", "GET", "/redirect", "GET"));
  }

  @Override
  protected List<Case> whileHolding(Run run) {
    List<Case> cases = new ArrayList<>();
    cases.add(new Case("inside a section, its own lock's pair, although the request leaves from the event loop", s -> {
      String sectionToken = sectionToken(s.port, "HOLDING");
      s.send("SECTION", "POST", s.open, "/ok", "STATUS 200", s.tagged("POST", "/ok", sectionToken, "rn-section"));
      s.count("rn-section", false, "tagged");
    }));
    cases.add(new Case("a 409 read on the event loop counts on its own destination, though the loop sent a write "
        + "elsewhere while it waited", s -> {
      s.fenced.releaseHeld = () -> !s.open.received.isEmpty();
      String command = "INTERLEAVED POST " + s.fenced.base() + "/held-stale " + s.open.base() + "/ok";
      assertThat(s.run(command)).isEqualTo("STATUS 409 STATUS 200");
      s.arrived(s.fenced, command, s.tagged("POST", "/held-stale"));
      s.arrived(s.open, command, s.tagged("POST", "/ok"));
      s.countTagged("POST", true);
      s.countTagged("POST", false);
      s.countRejection("stale_token");
    }));
    if (webClient(run.version())) {
      cases.add(new Case("Spring WebClient's request carries the pair once", s -> {
        s.send("WEBCLIENT", "POST", s.open, "/ok", "STATUS 200", s.tagged("POST", "/ok"));
        s.countTagged("POST", false);
      }));
    }
    return cases;
  }

  @Override
  protected List<Case> afterExpiry(Run run) {
    List<Case> cases = new ArrayList<>();
    cases.add(new Case("inside the section, a request is blocked under the section's lock", s -> {
      String sectionToken = sectionToken(s.port, "EXPIRED");
      s.send("SECTION", "POST", s.open, "/ok", "ERR " + BLOCKED_EXCEPTION + ": Fencing Agent blocked a http side "
          + "effect: lock 'rn-section', token " + sectionToken + ": the lease expired (local deadline passed)");
      s.count("rn-section", false, "blocked");
    }));
    if (webClient(run.version())) {
      cases.add(new Case("Spring WebClient's request fails with WebClient's own wrapping of the block", s -> {
        s.send("WEBCLIENT", "POST", s.open, "/ok",
            "ERR org.springframework.web.reactive.function.client.WebClientRequestException <- " + BLOCKED_EXCEPTION
                + ": " + s.blockedMessage());
        s.count(s.lock, false, "blocked");
      }));
    }
    cases.add(new Case("an exempt destination (fencing.exempt.http=localhost) gets the request, untagged", s -> {
      String exemptUrl = "http://localhost:" + s.open.port();
      assertThat(s.run("BLOCK POST " + exemptUrl + "/ok")).isEqualTo("STATUS 200");
      s.arrived(s.open, "BLOCK POST " + exemptUrl + "/ok", s.untagged("POST", "/ok"));
      s.count(s.lock, false, "exempt");
    }));
    return cases;
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
