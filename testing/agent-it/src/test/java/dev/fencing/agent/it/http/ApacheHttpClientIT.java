package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.http.JavaHttpClientIT.RecordingServer;
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
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Apache HttpClient 5 hook against real JDK HttpServers (one fenced, one not), classic and async, with the
 * oldest and the latest supported 5.x loaded side by side in one application JVM per JDK.
 */
class ApacheHttpClientIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /** target/apache-httpclient/<version>/, filled by the apache-httpclient-range execution in agent/jar/pom.xml. */
  static List<Path> libraryDirs() throws IOException {
    String dir = System.getProperty("fencing.it.apache.httpclient");
    if (dir == null || !Files.isDirectory(Path.of(dir))) {
      throw new IllegalStateException("Apache HttpClient jars missing (" + dir + "): run through Maven "
          + "(mvn verify -pl agent/jar -am), whose apache-httpclient-range execution copies them");
    }
    try (Stream<Path> s = Files.list(Path.of(dir))) {
      List<Path> dirs = s.filter(Files::isDirectory).sorted().toList();
      assertThat(dirs).as("oldest and latest Apache HttpClient 5 in " + dir).hasSize(2);
      return dirs;
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void everyAttemptCarriesThePairOnceAndUnsafeRequestsAreBlockedAfterExpiryUnlessFenced(Path javaHome)
      throws Exception {
    List<Path> libraries = libraryDirs();
    List<String> versions = libraries.stream().map(p -> p.getFileName().toString()).toList();
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer open = new RecordingServer();
        RecordingServer fenced = new RecordingServer();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome).name("apache-java" + AgentProcesses.javaVersion(javaHome))
            .agentArgs("lock=apache,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port + ",fenced.http=127.0.0.1:"
                + fenced.server.getAddress().getPort() + ",etcd.endpoints=" + etcd.endpoints())
            .classpath(AgentProcesses.appClasspath()).mainClass(ApacheHttpApp.class.getName())
            .args(libraries.stream().map(p -> p.getFileName() + "=" + p).toArray(String[]::new)).start()) {
      app.awaitOutput("APP STARTED", Duration.ofSeconds(30));
      for (String v : versions) {
        assertThat(app.output()).contains("LOADED " + v + " httpclient5-" + v + ".jar");
      }
      AppStdin stdin = AppStdin.http(app);
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      String pair = "token=[" + token + "] lock=[apache]";
      String ok = "STATUS 200 callerHeaders=[X-App]";
      String asyncOk = "STATUS 200 callback=completed callerHeaders=[X-App]";

      // Holding: every attempt (first, redirected, retried after a 503) carries the pair exactly once; the
      // application's request objects keep only their own header. Async redirects and retries use GET: 5.0's async
      // client never completes a re-sent request that has a body (without the agent too; fixed in later 5.x).
      for (String v : versions) {
        open.received.clear();
        assertThat(stdin.run(v + " SYNC POST " + open.base() + "/ok")).isEqualTo(ok);
        assertThat(stdin.run(v + " ASYNC PUT " + open.base() + "/ok")).isEqualTo(asyncOk);
        assertThat(stdin.run(v + " SYNC GET " + open.base() + "/ok")).isEqualTo(ok);
        assertThat(stdin.run(v + " SYNC POST " + open.base() + "/redirect")).isEqualTo(ok);
        assertThat(stdin.run(v + " ASYNC GET " + open.base() + "/redirect")).isEqualTo(asyncOk);
        assertThat(stdin.run(v + " SYNC PUT " + open.base() + "/flaky/" + v + "-sync")).isEqualTo(ok);
        assertThat(stdin.run(v + " ASYNC GET " + open.base() + "/flaky/" + v + "-async")).isEqualTo(asyncOk);
        assertThat(open.received).as(v).containsExactly("POST /ok " + pair, "PUT /ok " + pair, "GET /ok " + pair,
            "POST /redirect " + pair, "POST /ok " + pair, "GET /redirect " + pair, "GET /ok " + pair,
            "PUT /flaky/" + v + "-sync " + pair, "PUT /flaky/" + v + "-sync " + pair,
            "GET /flaky/" + v + "-async " + pair, "GET /flaky/" + v + "-async " + pair);
      }

      // Lease lost (etcd gone, local deadline passed).
      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      String blocked = "ERR dev.fencing.agent.bootstrap.FencingBlockedException: Fencing Agent blocked a http side "
          + "effect: lock 'apache', token " + token + ": the lease expired (local deadline passed)";

      for (String v : versions) {
        open.received.clear();
        fenced.received.clear();
        // Unfenced host: unsafe requests never leave the process (a blocked PUT is not retried either), reads do,
        // untagged.
        assertThat(stdin.run(v + " SYNC POST " + open.base() + "/ok")).isEqualTo(blocked);
        assertThat(stdin.run(v + " SYNC PUT " + open.base() + "/ok")).isEqualTo(blocked);
        assertThat(stdin.run(v + " ASYNC POST " + open.base() + "/ok")).isEqualTo(blocked
            + " callback=failed(dev.fencing.agent.bootstrap.FencingBlockedException) callerHeaders=[X-App]");
        assertThat(stdin.run(v + " SYNC GET " + open.base() + "/ok")).isEqualTo(ok);
        assertThat(stdin.run(v + " ASYNC GET " + open.base() + "/ok")).isEqualTo(asyncOk);
        assertThat(open.received).as(v).containsExactly("GET /ok token=null lock=null", "GET /ok token=null lock=null");

        // Fenced service: the POST goes out with the last token and the fence's 409 reaches the application.
        assertThat(stdin.run(v + " SYNC POST " + fenced.base() + "/stale")).startsWith("STATUS 409");
        assertThat(stdin.run(v + " ASYNC POST " + fenced.base() + "/stale")).startsWith("STATUS 409 callback=completed");
        assertThat(fenced.received).as(v).containsExactly("POST /stale " + pair, "POST /stale " + pair);
      }

      // Unsafe requests are counted per attempt that went out or was stopped: 2 versions x (2 single attempts + a
      // redirected POST's 2 hops + a retried PUT's 2 attempts) tagged while holding; 2 x 3 blocked (the blocked PUT
      // was not retried); 2 x 2 sent to the fence and rejected.
      assertThat(Http.get("http://127.0.0.1:" + port + "/metrics"))
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"apache\",outcome=\"tagged\"} 12.0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"apache\",outcome=\"blocked\"} 6.0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"true\",lock=\"apache\",outcome=\"tagged\"} 4.0")
          .contains("fencing_rejections_total{channel=\"http\",lock=\"apache\",reason=\"stale_token\"} 4.0");
    }
  }
}
