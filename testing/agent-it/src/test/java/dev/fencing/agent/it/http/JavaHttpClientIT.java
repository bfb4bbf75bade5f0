package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.apps.HttpApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The JDK HttpClient hook against real JDK HttpServers: one fenced, one not. */
public class JavaHttpClientIT {
  public static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /**
   * A real server recording what it received: "METHOD path token=[...] lock=[...]". /redirect answers 307 to /ok,
   * /stale a fence's 409, /flaky/... 503 with Retry-After the first time each path is asked for (clients retry it).
   */
  public static final class RecordingServer implements AutoCloseable {
    public final HttpServer server;
    public final List<String> received = new CopyOnWriteArrayList<>();
    /** The Fencing-Grant values of each request received, as the server lists them ("null" when absent). */
    public final List<String> grants = new CopyOnWriteArrayList<>();
    private final Set<String> flaky = ConcurrentHashMap.newKeySet();

    public RecordingServer() throws IOException {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.createContext("/", ex -> {
        received.add(ex.getRequestMethod() + " " + ex.getRequestURI().getPath() + " token="
            + ex.getRequestHeaders().get("Fencing-Token") + " lock=" + ex.getRequestHeaders().get("Fencing-Lock"));
        grants.add(String.valueOf(ex.getRequestHeaders().get("Fencing-Grant")));
        ex.getRequestBody().readAllBytes();
        String path = ex.getRequestURI().getPath();
        if (path.equals("/redirect")) {
          ex.getResponseHeaders().set("Location", "/ok");
          ex.sendResponseHeaders(307, -1);
        } else if (path.startsWith("/flaky/") && flaky.add(path)) {
          ex.getResponseHeaders().set("Retry-After", "1");
          ex.sendResponseHeaders(503, -1);
        } else if (path.equals("/stale") || path.equals("/replayed")) {
          ex.getResponseHeaders().set("Fencing-Rejected", path.equals("/stale") ? "stale-token" : "replayed-token");
          byte[] body = "{\"status\":409}".getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(409, body.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
          }
        } else {
          ex.sendResponseHeaders(200, -1);
        }
        ex.close();
      });
      server.start();
    }

    public String base() {
      return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void requestsCarryThePairOnceAndUnsafeOnesAreBlockedAfterExpiryUnlessFenced(Path javaHome) throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer open = new RecordingServer();
        RecordingServer fenced = new RecordingServer();
        AgentJvm app = startApp(javaHome, "http", "web", port, fenced, etcd)) {
      AppStdin stdin = AppStdin.http(app);
      String status = Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      String token = Http.jsonField(status, "token");
      String pair = "token=[" + token + "] lock=[web]";
      // Fencing-Grant: the lease id /status reports (lower-case hex), once per request, redirects included.
      String grant = Http.jsonField(status, "leaseId").replace("\"", "");
      assertThat(grant).matches("[0-9a-f]{1,16}");

      assertThat(stdin.run("SEND POST " + open.base() + "/ok")).isEqualTo("STATUS 200 callerHeaders=[X-App]");
      assertThat(stdin.run("ASYNC PUT " + open.base() + "/ok")).startsWith("STATUS 200");
      assertThat(stdin.run("SEND GET " + open.base() + "/ok")).startsWith("STATUS 200");
      assertThat(stdin.run("SEND POST " + open.base() + "/redirect")).startsWith("STATUS 200");
      assertThat(open.received).containsExactly("POST /ok " + pair, "PUT /ok " + pair, "GET /ok " + pair,
          "POST /redirect " + pair, "POST /ok " + pair);
      assertThat(open.grants).hasSize(5).containsOnly("[" + grant + "]");

      // Lease lost (etcd gone, local deadline passed).
      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      open.received.clear();

      // Unfenced host: the POST never leaves the process (sync and async), the GET still does, untagged.
      assertThat(stdin.run("SEND POST " + open.base() + "/ok"))
          .startsWith("ERR ").contains("Fencing Agent blocked a http side effect: lock 'web', token " + token);
      assertThat(stdin.run("ASYNC DELETE " + open.base() + "/ok"))
          .startsWith("ERR dev.fencing.agent.bootstrap.FencingBlockedException");
      // A method written in lower case (the JDK client sends it as written) is the same side effect.
      assertThat(stdin.run("SEND post " + open.base() + "/ok"))
          .startsWith("ERR ").contains("Fencing Agent blocked a http side effect");
      assertThat(stdin.run("SEND GET " + open.base() + "/ok")).startsWith("STATUS 200");
      assertThat(open.received).containsExactly("GET /ok token=null lock=null");

      // Fenced service: the POST goes out with the last token, the fence answers 409, the agent counts it.
      assertThat(stdin.run("SEND POST " + fenced.base() + "/stale")).startsWith("STATUS 409");
      assertThat(fenced.received).containsExactly("POST /stale " + pair);
      assertThat(fenced.grants).containsExactly("[" + grant + "]");
      // A fence holding this token for another grant (an etcd restored from a snapshot): 409 replayed-token, counted.
      assertThat(stdin.run("SEND POST " + fenced.base() + "/replayed")).startsWith("STATUS 409");
      String metrics = Http.get("http://127.0.0.1:" + port + "/metrics");
      assertThat(metrics)
          .contains("fencing_rejections_total{channel=\"http\",lock=\"web\",reason=\"stale_token\"} 1.0")
          .contains("fencing_rejections_total{channel=\"http\",lock=\"web\",reason=\"replayed_token\"} 1.0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"web\",outcome=\"blocked\"} 3.0");
    }
  }

  /**
   * The HTTP app with the agent (lock {@code lock}, 3 s lease, status on {@code port}), {@code fenced} listed in
   * fencing.fenced.http; returns once the app has started.
   */
  public static AgentJvm startApp(Path javaHome, String name, String lock, int port, RecordingServer fenced, EtcdCluster etcd) {
    AgentJvm app = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
        .agentArgs("lock=" + lock + ",lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port
            + ",fenced.http=127.0.0.1:" + fenced.server.getAddress().getPort() + ",etcd.endpoints=" + etcd.endpoints())
        .classpath(AgentProcesses.appClasspath()).mainClass(HttpApp.class.getName()).start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    return app;
  }
}
