package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.apps.OkHttpApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The OkHttp hook against real JDK HttpServers (one fenced, one not), on the oldest 4.x, the latest 4.x and the latest
 * 5.x: every OkHttp version on this build's Java, the oldest and the newest on Java 25; and the newest once more as a
 * named module (5.x ships a module-info), where the advice inlined into module okhttp3 must still reach the agent.
 */
class OkHttpIT {
  private static final String CLASS_PATH = "class path";
  private static final String MODULE_PATH = "module path";

  /** (Java home, OkHttp version, path) triples; the versions and their jars come from agent/jar/pom.xml. */
  static Stream<Arguments> matrix() {
    List<String> versions = Arrays.asList(System.getProperty("fencing.it.okhttp.versions", "").split(","));
    if (versions.isEmpty() || versions.get(0).isBlank()) {
      throw new IllegalStateException("fencing.it.okhttp.versions is not set: run through Maven (agent/jar/pom.xml)");
    }
    List<Path> homes = AgentProcesses.javaHomes();
    List<Arguments> runs = new ArrayList<>();
    String newest = versions.get(versions.size() - 1);
    for (String v : versions) {
      runs.add(Arguments.of(homes.get(0), v, CLASS_PATH));
    }
    for (Path other : homes.subList(1, homes.size())) {
      runs.add(Arguments.of(other, versions.get(0), CLASS_PATH));
      if (versions.size() > 1) {
        runs.add(Arguments.of(other, newest, CLASS_PATH));
      }
    }
    runs.add(Arguments.of(homes.get(0), newest, MODULE_PATH));
    return runs.stream();
  }

  /**
   * Records "METHOD path token=[...] lock=[...] chains=[app interceptor header][network interceptor header]".
   * /redirect answers 303 to /ok (the redirect every OkHttp follows for a POST: 4.0 does not follow a POST's 307),
   * /flaky 408 every other time (OkHttp retries a 408 once), /stale a fence's 409.
   */
  static final class Server implements AutoCloseable {
    final HttpServer server;
    final List<String> received = new CopyOnWriteArrayList<>();
    private final AtomicBoolean timedOut = new AtomicBoolean();

    Server() throws IOException {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.createContext("/", ex -> {
        var h = ex.getRequestHeaders();
        received.add(ex.getRequestMethod() + " " + ex.getRequestURI().getPath() + " token=" + h.get("Fencing-Token")
            + " lock=" + h.get("Fencing-Lock") + " chains=" + h.get("X-Interceptor") + h.get("X-Network"));
        ex.getRequestBody().readAllBytes();
        switch (ex.getRequestURI().getPath()) {
          case "/redirect" -> {
            ex.getResponseHeaders().set("Location", "/ok");
            ex.sendResponseHeaders(303, -1);
          }
          case "/flaky" -> ex.sendResponseHeaders(timedOut.compareAndSet(false, true) ? 408 : 200, -1);
          case "/stale" -> {
            ex.getResponseHeaders().set("Fencing-Rejected", "stale-token");
            byte[] body = "{\"status\":409}".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(409, body.length);
            try (OutputStream out = ex.getResponseBody()) {
              out.write(body);
            }
          }
          default -> ex.sendResponseHeaders(200, -1);
        }
        ex.close();
      });
      server.start();
    }

    String base() {
      return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  @ParameterizedTest(name = "{1} on {0}, {2}")
  @MethodSource("matrix")
  void everyAttemptCarriesThePairOnceAndUnsafeOnesAreBlockedAfterExpiryUnlessFenced(Path javaHome, String version,
      String path) throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); Server open = new Server(); Server fenced = new Server();
        AgentJvm app = startApp(javaHome, version, path, port, fenced, etcd)) {
      AppStdin stdin = AppStdin.http(app);
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      String pair = "token=[" + token + "] lock=[ok] chains=[1][1]";

      assertThat(stdin.run("SYNC POST " + open.base() + "/ok")).isEqualTo("STATUS 200 callerHeaders=[X-App]");
      assertThat(stdin.run("ASYNC PUT " + open.base() + "/ok")).isEqualTo("STATUS 200 callerHeaders=[X-App]");
      assertThat(stdin.run("SYNC GET " + open.base() + "/ok")).startsWith("STATUS 200");
      assertThat(stdin.run("SYNC POST " + open.base() + "/redirect")).startsWith("STATUS 200");
      assertThat(stdin.run("ASYNC PATCH " + open.base() + "/flaky")).startsWith("STATUS 200");
      assertThat(open.received).containsExactly("POST /ok " + pair, "PUT /ok " + pair, "GET /ok " + pair,
          "POST /redirect " + pair, "GET /ok " + pair, "PATCH /flaky " + pair, "PATCH /flaky " + pair);

      // Lease lost (etcd gone, local deadline passed).
      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      open.received.clear();

      // Unfenced host: the POST never leaves the process (execute and enqueue), the GET still does, untagged.
      assertThat(stdin.run("SYNC POST " + open.base() + "/ok"))
          .isEqualTo("ERR dev.fencing.agent.bootstrap.FencingBlockedException: Fencing Agent blocked a http side effect: "
              + "lock 'ok', token " + token + ": the lease expired (local deadline passed)");
      assertThat(stdin.run("ASYNC DELETE " + open.base() + "/ok"))
          .startsWith("ERR dev.fencing.agent.bootstrap.FencingBlockedException: Fencing Agent blocked a http side effect: "
              + "lock 'ok', token " + token);
      assertThat(stdin.run("SYNC GET " + open.base() + "/ok")).startsWith("STATUS 200");
      assertThat(open.received).containsExactly("GET /ok token=null lock=null chains=[1][1]");

      // Fenced service: the POST goes out with the last token, the fence answers 409, the agent counts it once.
      assertThat(stdin.run("SYNC POST " + fenced.base() + "/stale")).startsWith("STATUS 409");
      assertThat(fenced.received).containsExactly("POST /stale " + pair);
      // One decision per attempt: 5 writes went out to the open server (the 408'd PATCH twice), 2 were blocked.
      String sideEffects = "fencing_side_effects_total{channel=\"http\",fenced=";
      assertThat(Http.get("http://127.0.0.1:" + port + "/metrics"))
          .contains("fencing_rejections_total{channel=\"http\",lock=\"ok\",reason=\"stale_token\"} 1.0")
          .contains(sideEffects + "\"false\",lock=\"ok\",outcome=\"tagged\"} 5.0")
          .contains(sideEffects + "\"false\",lock=\"ok\",outcome=\"blocked\"} 2.0")
          .contains(sideEffects + "\"true\",lock=\"ok\",outcome=\"tagged\"} 1.0");
      assertThat(app.output()).doesNotContain("could not instrument");
    }
  }

  /**
   * The OkHttp app on {@code version}'s jars (on the class path, or as modules resolved from the module path) with the
   * agent (lock "ok", 3 s lease, {@code fenced} fenced).
   */
  private static AgentJvm startApp(Path javaHome, String version, String path, int port, Server fenced,
      EtcdCluster etcd) {
    AgentJvm.Builder builder = AgentJvm.builder().javaHome(javaHome)
        .name("okhttp-" + version + "-java" + AgentProcesses.javaVersion(javaHome)
            + (path.equals(MODULE_PATH) ? "-modules" : ""))
        .agentArgs("lock=ok,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port
            + ",fenced.http=127.0.0.1:" + fenced.server.getAddress().getPort() + ",etcd.endpoints=" + etcd.endpoints())
        .mainClass(OkHttpApp.class.getName());
    if (path.equals(MODULE_PATH)) {
      builder.jvmArg("--module-path").jvmArg(okHttpClasspath(version)).jvmArg("--add-modules").jvmArg("okhttp3")
          .classpath(AgentProcesses.appClasspath());
    } else {
      builder.classpath(AgentProcesses.appClasspath() + File.pathSeparator + okHttpClasspath(version));
    }
    AgentJvm app = builder.start();
    assertThat(app.awaitOutput("APP STARTED", Duration.ofSeconds(20)))
        .contains("OkHttp module: " + (path.equals(MODULE_PATH) ? "okhttp3" : "null"));
    return app;
  }

  /** OkHttp {@code version} with okio and kotlin-stdlib, copied by the build into target/okhttp/<version>. */
  private static String okHttpClasspath(String version) {
    Path dir = Path.of(System.getProperty("fencing.it.okhttp.dir", "target/okhttp")).resolve(version);
    try (Stream<Path> jars = Files.list(dir)) {
      String cp = jars.filter(p -> p.toString().endsWith(".jar")).sorted().map(Path::toString)
          .collect(Collectors.joining(File.pathSeparator));
      if (cp.isEmpty()) {
        throw new IllegalStateException(dir + " has no jars: run `mvn verify -pl agent/jar`, which copies them");
      }
      return cp;
    } catch (IOException e) {
      throw new UncheckedIOException(dir + " is missing: run `mvn verify -pl agent/jar`, which copies the OkHttp jars",
          e);
    }
  }
}
