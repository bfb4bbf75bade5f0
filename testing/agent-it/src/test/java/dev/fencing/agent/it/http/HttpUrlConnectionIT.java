package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.http.JavaHttpClientIT.RecordingServer;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The HttpURLConnection hook (a java.base class) against real JDK HttpServers: one fenced, one not. */
class HttpUrlConnectionIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void requestsCarryThePairOnceAndUnsafeOnesAreBlockedAfterExpiryUnlessFenced(Path javaHome) throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer open = new RecordingServer();
        RecordingServer fenced = new RecordingServer();
        AgentJvm app = JavaHttpClientIT.startApp(javaHome, "urlc", "urlc", port, fenced, etcd)) {
      AppStdin stdin = AppStdin.http(app);
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      String pair = "token=[" + token + "] lock=[urlc]";

      assertThat(stdin.run("URLC POST " + open.base() + "/ok")).isEqualTo("STATUS 200");
      assertThat(stdin.run("URLC GET " + open.base() + "/ok")).isEqualTo("STATUS 200");
      assertThat(stdin.run("URLC PUT " + open.base() + "/redirect")).isEqualTo("STATUS 200");
      assertThat(open.received).containsExactly("POST /ok " + pair, "GET /ok " + pair, "PUT /redirect " + pair,
          "PUT /ok " + pair);

      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      open.received.clear();

      assertThat(stdin.run("URLC POST " + open.base() + "/ok"))
          .isEqualTo("ERR dev.fencing.agent.bootstrap.FencingBlockedException: Fencing Agent blocked a http side effect: "
              + "lock 'urlc', token " + token + ": the lease expired (local deadline passed)");
      assertThat(stdin.run("URLC GET " + open.base() + "/ok")).isEqualTo("STATUS 200");
      assertThat(open.received).containsExactly("GET /ok token=null lock=null");

      assertThat(stdin.run("URLC POST " + fenced.base() + "/stale")).isEqualTo("STATUS 409");
      assertThat(fenced.received).containsExactly("POST /stale " + pair);
      assertThat(Http.get("http://127.0.0.1:" + port + "/metrics"))
          .contains("fencing_rejections_total{channel=\"http\",lock=\"urlc\",reason=\"stale_token\"} 1.0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"urlc\",outcome=\"blocked\"} 1.0");
    }
  }
}
