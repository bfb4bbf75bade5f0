package dev.fencing.agent.it.metrics;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.testing.EtcdCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A broken agent shows in its metrics: a misconfigured agent reports {@code fencing_agent_state{state="failed"} 1}
 * (not a standby's zeros), its blocked side effects carry reason {@code agent_failed}, and every agent says which
 * build it is ({@code fencing_build_info}, the jar manifest's version) and how fast etcd answers
 * ({@code fencing_coordinator_request_duration_seconds}).
 */
class AgentStateMetricsIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void aFailedAgentAHolderAndAStandbyAreToldApartByTheirMetrics(Path javaHome) throws Exception {
    String version = manifestVersion();
    String java = "java" + AgentProcesses.javaVersion(javaHome);
    try (EtcdCluster etcd = EtcdCluster.single();
        Agent failed = AgentProcesses.start(javaHome, "state-failed", "lock=cfg,lease.ttl=banana");
        Agent holder = AgentProcesses.start(javaHome, "state-holder",
            "lock=cfg,lease.ttl=3s,etcd.endpoints=" + etcd.endpoints())) {
      failed.awaitState("FAILED", Duration.ofSeconds(10));
      holder.awaitState("HOLDING", Duration.ofSeconds(20));
      try (Agent standby = AgentProcesses.start(javaHome, "state-standby",
          "lock=cfg,lease.ttl=3s,etcd.endpoints=" + etcd.endpoints())) {
        standby.awaitState("STANDBY", Duration.ofSeconds(20));
        Thread.sleep(1500); // the probes decide every millisecond; the holder sends a keepalive every second

        String f = failed.metrics();
        assertThat(oneHot(f)).as("failed agent's state").isEqualTo("failed");
        assertThat(value(f, "fencing_side_effects_blocked_total{channel=\"http\",fenced=\"false\",lock=\"cfg\","
            + "outcome=\"blocked\",reason=\"agent_failed\"}")).isPositive();
        assertThat(value(f, "fencing_side_effects_blocked_total{channel=\"http\",fenced=\"false\",lock=\"cfg\","
            + "outcome=\"blocked\",reason=\"standby\"}")).isZero();
        assertBuildInfo(f, version, javaHome);
        assertThat(failed.jvm.output()).as(java + " startup line")
            .contains("[fencing-agent] INFO fencing-agent " + version + " (java ");

        String h = holder.metrics();
        assertThat(oneHot(h)).as("holder's state").isEqualTo("holding");
        assertBuildInfo(h, version, javaHome);
        String d = "fencing_coordinator_request_duration_seconds";
        assertThat(value(h, d + "_count{lock=\"cfg\",op=\"grant\"}")).isGreaterThanOrEqualTo(1);
        assertThat(value(h, d + "_count{lock=\"cfg\",op=\"campaign\"}")).isGreaterThanOrEqualTo(1);
        assertThat(value(h, d + "_count{lock=\"cfg\",op=\"keepalive\"}")).isGreaterThanOrEqualTo(1);
        assertThat(value(h, d + "_bucket{lock=\"cfg\",op=\"keepalive\",le=\"+Inf\"}"))
            .isEqualTo(value(h, d + "_count{lock=\"cfg\",op=\"keepalive\"}"));

        String s = standby.metrics();
        assertThat(oneHot(s)).as("standby's state").isEqualTo("standby");
        assertThat(value(s, "fencing_side_effects_blocked_total{channel=\"http\",fenced=\"false\",lock=\"cfg\","
            + "outcome=\"blocked\",reason=\"standby\"}")).isPositive();
        assertThat(value(s, "fencing_side_effects_blocked_total{channel=\"http\",fenced=\"false\",lock=\"cfg\","
            + "outcome=\"blocked\",reason=\"agent_failed\"}")).isZero();
      }
    }
  }

  /** The one state whose gauge is 1; fails unless exactly one is. */
  private static String oneHot(String metrics) {
    Matcher m = Pattern.compile("(?m)^fencing_agent_state\\{lock=\"cfg\",state=\"(\\w+)\"\\} (\\S+)$").matcher(metrics);
    List<String> on = new java.util.ArrayList<>();
    int states = 0;
    while (m.find()) {
      states++;
      if (Double.parseDouble(m.group(2)) == 1) {
        on.add(m.group(1));
      }
    }
    assertThat(states).as("fencing_agent_state series in\n" + metrics).isEqualTo(7);
    assertThat(on).as("states at 1").hasSize(1);
    return on.get(0);
  }

  private static void assertBuildInfo(String metrics, String version, Path javaHome) {
    Matcher m = Pattern.compile("(?m)^fencing_build_info\\{coordinator=\"etcd\",java=\"([^\"]+)\",lock=\"cfg\","
        + "version=\"" + Pattern.quote(version) + "\"\\} 1(\\.0)?$").matcher(metrics);
    assertThat(m.find()).as("fencing_build_info with version " + version + " in\n" + metrics).isTrue();
    assertThat(m.group(1)).startsWith(AgentProcesses.javaVersion(javaHome) + ".");
  }

  private static double value(String metrics, String series) {
    for (String line : metrics.split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    throw new AssertionError("no series " + series + " in\n" + metrics);
  }

  /** The Implementation-Version of the agent jar under test. */
  private static String manifestVersion() throws Exception {
    try (JarFile jar = new JarFile(System.getProperty("fencing.agent.jar"))) {
      String v = jar.getManifest().getMainAttributes().getValue("Implementation-Version");
      assertThat(v).as("Implementation-Version of " + jar.getName()).isNotBlank();
      return v;
    }
  }
}
