package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.http.JavaHttpClientIT.RecordingServer;
import dev.fencing.agent.it.apps.ApacheHttp4Driver;
import dev.fencing.agent.it.apps.ApacheHttpApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Apache HttpClient 4.x hook against real JDK HttpServers (one fenced, one not), with the oldest (4.5) and the
 * latest (4.5.14) supported release loaded side by side in one application JVM per JDK.
 */
class ApacheHttpClient4IT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /** target/apache-httpclient-4/<version>/, filled by the apache-httpclient-4-range execution in agent/jar/pom.xml. */
  static List<Path> libraryDirs() throws IOException {
    String dir = System.getProperty("fencing.it.apache.httpclient4");
    if (dir == null || !Files.isDirectory(Path.of(dir))) {
      throw new IllegalStateException("Apache HttpClient 4 jars missing (" + dir + "): run through Maven "
          + "(mvn verify -pl agent/jar -am), whose apache-httpclient-4-range execution copies them");
    }
    try (Stream<Path> s = Files.list(Path.of(dir))) {
      List<Path> dirs = s.filter(Files::isDirectory).sorted().toList();
      assertThat(dirs).as("oldest and latest Apache HttpClient 4 in " + dir).hasSize(2);
      return dirs;
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void everyAttemptCarriesThePairOnceAndUnsafeRequestsAreBlockedAfterExpiryUnlessFenced(Path javaHome)
      throws Exception {
    List<Path> libraries = libraryDirs();
    List<String> versions = libraries.stream().map(p -> p.getFileName().toString()).toList();
    List<String> args = new ArrayList<>(List.of("driver=" + ApacheHttp4Driver.class.getName()));
    libraries.forEach(p -> args.add(p.getFileName() + "=" + p));
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer open = new RecordingServer();
        RecordingServer fenced = new RecordingServer();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome)
            .name("apache4-java" + AgentProcesses.javaVersion(javaHome))
            .agentArgs("lock=apache4,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port + ",fenced.http=127.0.0.1:"
                + fenced.server.getAddress().getPort() + ",etcd.endpoints=" + etcd.endpoints())
            .classpath(AgentProcesses.appClasspath()).mainClass(ApacheHttpApp.class.getName())
            .args(args.toArray(String[]::new)).start()) {
      app.awaitOutput("APP STARTED", Duration.ofSeconds(30));
      for (String v : versions) {
        assertThat(app.output()).contains("LOADED " + v + " httpclient-" + v + ".jar");
      }
      AppStdin stdin = AppStdin.http(app);
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      String pair = "token=[" + token + "] lock=[apache4]";
      String ok = "STATUS 200 callerHeaders=[X-App]";

      // Holding: every attempt (first, redirected) carries the pair exactly once; the application's request objects
      // keep only their own header. (4.x's default redirect strategy follows a 307 for GET and HEAD only.)
      for (String v : versions) {
        open.received.clear();
        assertThat(stdin.run(v + " SYNC POST " + open.base() + "/ok")).isEqualTo(ok);
        assertThat(stdin.run(v + " SYNC PUT " + open.base() + "/ok")).isEqualTo(ok);
        assertThat(stdin.run(v + " SYNC GET " + open.base() + "/ok")).isEqualTo(ok);
        assertThat(stdin.run(v + " SYNC GET " + open.base() + "/redirect")).isEqualTo(ok);
        assertThat(open.received).as(v).containsExactly("POST /ok " + pair, "PUT /ok " + pair, "GET /ok " + pair,
            "GET /redirect " + pair, "GET /ok " + pair);
      }

      // Lease lost (etcd gone, local deadline passed).
      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      String blocked = "ERR dev.fencing.agent.bootstrap.FencingBlockedException: Fencing Agent blocked a http side "
          + "effect: lock 'apache4', token " + token + ": the lease expired (local deadline passed)";

      for (String v : versions) {
        open.received.clear();
        fenced.received.clear();
        // Unfenced host: unsafe requests never leave the process, reads do, untagged.
        assertThat(stdin.run(v + " SYNC POST " + open.base() + "/ok")).isEqualTo(blocked);
        assertThat(stdin.run(v + " SYNC PUT " + open.base() + "/ok")).isEqualTo(blocked);
        assertThat(stdin.run(v + " SYNC GET " + open.base() + "/ok")).isEqualTo(ok);
        assertThat(open.received).as(v).containsExactly("GET /ok token=null lock=null");

        // Fenced service: the POST goes out with the last token and the fence's 409 reaches the application.
        assertThat(stdin.run(v + " SYNC POST " + fenced.base() + "/stale")).startsWith("STATUS 409");
        assertThat(fenced.received).as(v).containsExactly("POST /stale " + pair);
      }

      // Unsafe requests, counted per attempt that went out or was stopped: 2 versions x (POST, PUT) tagged while
      // holding; 2 x 2 blocked, once each (DefaultHttpRequestRetryHandler would retry a request that was never sent
      // three more times); 2 x 1 sent to the fence and rejected.
      assertThat(Http.get("http://127.0.0.1:" + port + "/metrics"))
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"apache4\",outcome=\"tagged\"} 4.0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"apache4\",outcome=\"blocked\"} 4.0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"true\",lock=\"apache4\",outcome=\"tagged\"} 2.0")
          .contains("fencing_rejections_total{channel=\"http\",lock=\"apache4\",reason=\"stale_token\"} 2.0");
    }
  }

  /** fencing.instrumentation.apache-httpclient-4.enabled=false: the client runs as without the agent. */
  @org.junit.jupiter.api.Test
  void theSwitchLeavesTheClientAlone() throws Exception {
    Path latest = libraryDirs().get(libraryDirs().size() - 1);
    String v = latest.getFileName().toString();
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer open = new RecordingServer();
        AgentJvm app = AgentJvm.builder().name("apache4-off")
            .agentArgs("lock=apache4,instrumentation.apache-httpclient-4.enabled=false,http.port=" + port
                + ",etcd.endpoints=" + etcd.endpoints())
            .classpath(AgentProcesses.appClasspath()).mainClass(ApacheHttpApp.class.getName())
            .args("driver=" + ApacheHttp4Driver.class.getName(), v + "=" + latest).start()) {
      app.awaitOutput("APP STARTED", Duration.ofSeconds(30));
      AppStdin stdin = AppStdin.http(app);
      Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      assertThat(stdin.run(v + " SYNC POST " + open.base() + "/ok")).isEqualTo("STATUS 200 callerHeaders=[X-App]");
      assertThat(open.received).containsExactly("POST /ok token=null lock=null");
    }
  }
}
