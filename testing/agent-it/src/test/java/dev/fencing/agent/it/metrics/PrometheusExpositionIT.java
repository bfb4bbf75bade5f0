package dev.fencing.agent.it.metrics;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.http.HttpAppJvm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.http.RecordingServer;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent's /metrics as Prometheus reads it: valid for {@code promtool check metrics}, every known label
 * combination from the first scrape; and the one log line per kind of block or rejection.
 */
class PrometheusExpositionIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void exposureIsValidForPromtoolCompleteFromTheStartAndEventsAreLoggedOncePerKind(Path javaHome) throws Exception {
    String promtool = promtool();
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer open = new RecordingServer();
        RecordingServer fenced = new RecordingServer();
        AgentJvm app = HttpAppJvm.start(javaHome, "exposition", "web", port, fenced, etcd)) {
      String first = Http.get("http://127.0.0.1:" + port + "/metrics");
      assertThat(check(promtool, first)).isEmpty();
      // Every combination of the DESIGN's labels, at 0 before any side effect (kafka has no hook yet: still there).
      for (String channel : List.of("jdbc", "http", "kafka")) {
        for (String f : List.of("true", "false")) {
          for (String outcome : List.of("tagged", "blocked")) {
            assertThat(first).contains("fencing_side_effects_total{channel=\"" + channel + "\",fenced=\"" + f
                + "\",lock=\"web\",outcome=\"" + outcome + "\"} 0.0");
          }
        }
        for (String reason : List.of("stale_token", "missing_token")) {
          assertThat(first).contains(
              "fencing_rejections_total{channel=\"" + channel + "\",lock=\"web\",reason=\"" + reason + "\"} 0.0");
        }
      }
      for (String reason : List.of("keepalive_failed", "lease_revoked", "key_deleted", "deadline_passed")) {
        assertThat(first).contains("fencing_lease_losses_total{lock=\"web\",reason=\"" + reason + "\"} 0.0");
      }

      AppStdin stdin = AppStdin.http(app);
      Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      assertThat(stdin.run("SEND POST " + open.base() + "/ok")).startsWith("STATUS 200");
      // Two rejections by the fence: counted twice, logged once (one line per kind per fencing.log.event-interval).
      assertThat(stdin.run("SEND POST " + fenced.base() + "/stale")).startsWith("STATUS 409");
      assertThat(stdin.run("SEND PUT " + fenced.base() + "/stale")).startsWith("STATUS 409");
      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      assertThat(stdin.run("SEND POST " + open.base() + "/ok")).startsWith("ERR ");
      assertThat(stdin.run("SEND DELETE " + open.base() + "/ok")).startsWith("ERR ");

      String after = Http.get("http://127.0.0.1:" + port + "/metrics");
      assertThat(check(promtool, after)).isEmpty();
      assertThat(after)
          .contains("fencing_rejections_total{channel=\"http\",lock=\"web\",reason=\"stale_token\"} 2.0")
          .contains("fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"web\",outcome=\"blocked\"} 2.0")
          .contains("fencing_lease_held{lock=\"web\"} 0.0");

      List<String> events = app.output().lines()
          .filter(l -> l.startsWith("[fencing-agent] WARN a fence") || l.startsWith("[fencing-agent] WARN blocked"))
          .toList();
      assertThat(events).containsExactly(
          "[fencing-agent] WARN a fence rejected a http side effect of lock 'web': reason stale_token"
              + " (a newer holder has written: this JVM's lease is gone)",
          "[fencing-agent] WARN blocked a http side effect to an unfenced destination: lock 'web', token "
              + Http.jsonField(Http.get("http://127.0.0.1:" + port + "/status"), "token")
              + ", reason expired (the lease expired (local deadline passed))");
    }
  }

  /** promtool's complaints about an exposition (empty when it passes). */
  static String check(String promtool, String exposition) throws Exception {
    Path file = Files.createTempFile("exposition", ".txt");
    try {
      Files.writeString(file, exposition);
      Process p = new ProcessBuilder(promtool, "check", "metrics").redirectErrorStream(true)
          .redirectInput(file.toFile()).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("promtool finished").isTrue();
      assertThat(p.exitValue()).as("promtool check metrics exit code; output:\n" + out).isZero();
      return out.trim();
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /** promtool from PATH; missing, the test fails saying how to install it (never a silent skip). */
  static String promtool() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path p = Path.of(dir, "promtool");
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    throw new IllegalStateException("promtool is not on PATH: install the Debian package 'prometheus'"
        + " (apt-get install -y prometheus, or run scripts/prerequisites.sh as root)");
  }
}
