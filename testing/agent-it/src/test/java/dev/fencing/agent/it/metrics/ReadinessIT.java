package dev.fencing.agent.it.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The probes a kubelet calls on the agent's port: GET /ready answers 503 while the agent is FAILED and, with
 * fencing.ready.require-holding=true, while another replica holds the JVM-wide lock; 200 otherwise, with one line
 * saying why. GET /live answers 200 whatever the agent's state.
 */
class ReadinessIT {
  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /**
   * A failed agent's readiness is its own logic, the same on every Java: this build's (the first case runs on both).
   */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void theHolderIsReadyAStandbyOnlyWhenHoldingIsNotRequired(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single()) {
      String args = "lock=probe,lease.ttl=3s,etcd.endpoints=" + etcd.endpoints();
      try (Agent holder = AgentProcesses.start(javaHome, "ready-holder", args + ",ready.require-holding=true")) {
        long token = Long.parseLong(Http.jsonField(holder.awaitState("HOLDING", Duration.ofSeconds(20)), "token"));
        assertThat(get(holder.port, "/ready")).isEqualTo("200 ready: lock 'probe' HOLDING with fencing token " + token);
        assertThat(get(holder.port, "/live")).isEqualTo("200 live");
        try (Agent strict = AgentProcesses.start(javaHome, "ready-strict", args + ",ready.require-holding=true");
            Agent lenient = AgentProcesses.start(javaHome, "ready-lenient", args)) {
          strict.awaitState("STANDBY", Duration.ofSeconds(20));
          lenient.awaitState("STANDBY", Duration.ofSeconds(20));
          assertThat(get(strict.port, "/ready"))
              .isEqualTo("503 not ready: lock 'probe' STANDBY (fencing.ready.require-holding=true)");
          assertThat(get(lenient.port, "/ready")).isEqualTo("200 ready: lock 'probe' STANDBY");
          assertThat(get(strict.port, "/live")).isEqualTo("200 live");

          holder.close(); // the holder goes (its lease released at exit): one of the two takes over
          long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
          while (!strict.state().equals("HOLDING") && !lenient.state().equals("HOLDING")) {
            assertThat(System.nanoTime()).as("a standby took over").isLessThan(deadline);
            Thread.sleep(100);
          }
          if (strict.state().equals("HOLDING")) {
            assertThat(get(strict.port, "/ready")).startsWith("200 ready: lock 'probe' HOLDING with fencing token ");
          } else {
            assertThat(get(strict.port, "/ready")).startsWith("503 not ready: lock 'probe' STANDBY");
          }
        }
      }
    }
  }

  /** FAILED (etcd unreachable before the first lease, or an invalid configuration) is not ready, and still live. */
  @ParameterizedTest
  @MethodSource("currentJava")
  void aFailedAgentIsNotReady(Path javaHome) throws Exception {
    String unreachable = "lock=probe,etcd.timeout=1s,etcd.endpoints=http://127.0.0.1:" + Ports.freePort();
    try (Agent down = AgentProcesses.start(javaHome, "ready-unreachable", unreachable);
        Agent invalid = AgentProcesses.start(javaHome, "ready-invalid", "lock=probe,lease.ttl=banana")) {
      down.awaitState("FAILED", Duration.ofSeconds(20));
      invalid.awaitState("FAILED", Duration.ofSeconds(20));
      assertThat(get(down.port, "/ready")).startsWith("503 not ready: lock 'probe' FAILED: ").contains("etcd");
      assertThat(get(invalid.port, "/ready")).startsWith("503 not ready: lock 'probe' FAILED: invalid configuration:")
          .contains("fencing.lease.ttl='banana'");
      assertThat(get(down.port, "/live")).isEqualTo("200 live");
      assertThat(get(invalid.port, "/live")).isEqualTo("200 live");
    }
  }

  /** "STATUS body" with the body's trailing newline dropped. */
  private static String get(int port, String path) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.headers().firstValue("Content-Type")).hasValue("text/plain; charset=utf-8");
    assertThat(r.body()).endsWith("\n").doesNotContain("\n\n");
    return r.statusCode() + " " + r.body().substring(0, r.body().length() - 1);
  }
}
