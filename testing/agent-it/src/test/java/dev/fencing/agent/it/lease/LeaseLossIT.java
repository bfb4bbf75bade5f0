package dev.fencing.agent.it.lease;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Losses etcd reports (the lock key deleted, the lease revoked), and token reuse detected across an agent restart. */
class LeaseLossIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /**
   * How the agent follows its lease is its own logic, the same on every Java: this build's (the first case runs on
   * both).
   */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void deletedLockKeyOrRevokedLeaseIsALossAndTheAgentCampaignsAgain(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        Agent agent = AgentProcesses.start(javaHome, "loss", "lock=loss,etcd.endpoints=" + etcd.endpoints())) {
      String s = agent.awaitState("HOLDING", Duration.ofSeconds(15));
      long first = Long.parseLong(Http.jsonField(s, "token"));

      etcd.etcdctl("del", "--prefix", "/fencing/locks/loss/"); // an operator removes the lock key
      String again = Http.awaitStatus(agent.port, "\"acquisitionsTotal\":2", Duration.ofSeconds(10));
      assertThat(Http.jsonField(again, "lastLossReason")).isEqualTo("key_deleted");
      long second = Long.parseLong(Http.jsonField(again, "token"));
      assertThat(second).isGreaterThan(first);

      String leaseId = Http.jsonField(agent.awaitState("HOLDING", Duration.ofSeconds(10)), "leaseId");
      etcd.etcdctl("lease", "revoke", leaseId); // the lease goes, and its key with it
      String third = Http.awaitStatus(agent.port, "\"acquisitionsTotal\":3", Duration.ofSeconds(10));
      assertThat(Http.jsonField(third, "lastLossReason")).isIn("key_deleted", "lease_revoked");
      assertThat(Long.parseLong(Http.jsonField(third, "token"))).isGreaterThan(second);
      assertThat(agent.metrics()).containsPattern("fencing_lease_losses_total\\{lock=\"loss\",reason=\"key_deleted\"\\} [12]\\.0");
    }
  }

  /**
   * jetcd ends a watch for good when it cannot resume it (here: etcd restarted after a compaction took the revision
   * the watch would resume from). The holder must keep watching its key: deleted afterwards, the lock is lost at once,
   * not held on a live lease beside the next holder.
   */
  @ParameterizedTest
  @MethodSource("currentJava")
  void aWatchEndedByCompactionIsSetUpAgainAndStillSeesTheKeyDeleted(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        Agent agent = AgentProcesses.start(javaHome, "compact",
            // a short etcd.timeout too: below jetcd's default retry delay it once failed every request
            "lock=compact,lease.ttl=10s,etcd.timeout=300ms,etcd.endpoints=" + etcd.endpoints())) {
      long first = Long.parseLong(Http.jsonField(agent.awaitState("HOLDING", Duration.ofSeconds(15)), "token"));
      for (int i = 0; i < 10; i++) {
        etcd.etcdctl("put", "filler", Integer.toString(i));
      }
      java.util.regex.Matcher header = java.util.regex.Pattern.compile("\"revision\":(\\d+)")
          .matcher(etcd.etcdctl("get", "filler", "-w", "json"));
      assertThat(header.find()).isTrue();
      String revision = header.group(1);
      etcd.etcdctl("compaction", revision);
      etcd.nodes().get(0).restart(); // the watch stream breaks; jetcd resumes from a compacted revision and gives up
      etcd.awaitHealthy(Duration.ofSeconds(10));
      Thread.sleep(3000);
      assertThat(agent.state()).isEqualTo("HOLDING");
      assertThat(agent.token()).isEqualTo(first);

      etcd.etcdctl("del", "--prefix", "/fencing/locks/compact/");
      String again = Http.awaitStatus(agent.port, "\"acquisitionsTotal\":2", Duration.ofSeconds(10));
      assertThat(Http.jsonField(again, "lastLossReason")).isEqualTo("key_deleted");
      assertThat(Long.parseLong(Http.jsonField(again, "token"))).isGreaterThan(first);
    }
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void highestTokenKeptInTheStateDirRevealsReuseAfterARestart(Path javaHome) throws Exception {
    Path stateDir = Files.createTempDirectory("fencing-state-");
    try (EtcdCluster etcd = EtcdCluster.single()) {
      for (int i = 0; i < 15; i++) {
        etcd.etcdctl("put", "filler", Integer.toString(i));
      }
      String args = "lock=persist,state.dir=" + stateDir + ",etcd.endpoints=" + etcd.endpoints();
      long first;
      try (Agent agent = AgentProcesses.start(javaHome, "persist-1", args)) {
        first = Long.parseLong(Http.jsonField(agent.awaitState("HOLDING", Duration.ofSeconds(15)), "token"));
        assertThat(first).isGreaterThan(15);
      }
      assertThat(Files.readString(stateDir.resolve("persist.token"))).contains("highestToken=" + first);

      etcd.wipeAndRestart(); // etcd restored from nothing while the agent was down
      try (Agent agent = AgentProcesses.start(javaHome, "persist-2", args)) {
        String s = Http.awaitStatus(agent.port, "\"tokenReused\":true", Duration.ofSeconds(15));
        assertThat(Http.jsonField(s, "highestSeenToken")).isEqualTo(Long.toString(first));
        Thread.sleep(100);
        assertThat(agent.lastDecision()).startsWith("BLOCK TOKEN_REUSED");
      }
    }
  }
}
