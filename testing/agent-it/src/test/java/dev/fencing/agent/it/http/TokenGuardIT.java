package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Tokens that the fences could not trust: reused after etcd lost its data, or above fencing.token.max. */
class TokenGuardIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void grantAfterEtcdDataWipeIsReportedAsTokenReuseBlocksAndHealsOnceTheRevisionPassesTheHighestToken(Path javaHome)
      throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single()) {
      for (int i = 0; i < 20; i++) {
        etcd.etcdctl("put", "filler", Integer.toString(i)); // raise the revision: the first token will be > 20
      }
      try (Agent agent = AgentProcesses.start(javaHome, "reuse",
          "lock=reuse,lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints=" + etcd.endpoints())) {
        agent.awaitState("HOLDING", Duration.ofSeconds(15));
        long first = agent.token();
        assertThat(first).isGreaterThan(20);
        assertThat(agent.metrics()).contains("fencing_token_reuse_total{lock=\"reuse\"} 0.0");

        etcd.wipeAndRestart(); // coordinator data loss: revisions start again from 1

        String reused = Http.awaitStatus(agent.port, "\"tokenReused\":true", Duration.ofSeconds(20));
        // Holding a reused grant would keep the lock from everyone: the agent gives it up and campaigns again.
        assertThat(Http.jsonField(reused, "state")).isIn("HOLDING", "LOST");
        assertThat(Long.parseLong(Http.jsonField(reused, "token"))).isLessThanOrEqualTo(first);
        assertThat(Http.jsonField(reused, "highestSeenToken")).isEqualTo(Long.toString(first));
        assertThat(Long.parseLong(Http.jsonField(reused, "tokenReuseTotal"))).isPositive();
        assertThat(agent.metrics()).containsPattern("fencing_token_reuse_total\\{lock=\"reuse\"\\} [1-9]");
        Thread.sleep(100);
        assertThat(agent.lastDecision()).startsWith("BLOCK TOKEN_REUSED ");
        assertThat(agent.jvm.output()).contains("token reuse on lock 'reuse'")
            .contains("lock given up, campaigning again");

        // The runbook's remedy: move etcd's revision above every token issued. No restart, no revoke: the agent's
        // next campaign gets a valid grant, and side effects are tagged again.
        for (long i = 0; i <= first; i++) {
          etcd.etcdctl("put", "filler", Long.toString(i));
        }
        String healed = Http.awaitStatus(agent.port, "\"tokenReused\":false", Duration.ofSeconds(25));
        assertThat(Http.jsonField(healed, "state")).isEqualTo("HOLDING");
        long token = Long.parseLong(Http.jsonField(healed, "token"));
        assertThat(token).isGreaterThan(first);
        Thread.sleep(300);
        assertThat(agent.lastDecision()).isEqualTo("TAG - " + token);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void tokenAboveTokenMaxIsAnOverflowAndBlocks(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single()) {
      for (int i = 0; i < 5; i++) {
        etcd.etcdctl("put", "filler", Integer.toString(i));
      }
      try (Agent agent = AgentProcesses.start(javaHome, "overflow",
          "lock=overflow,token.max=3,etcd.endpoints=" + etcd.endpoints())) {
        String s = Http.awaitStatus(agent.port, "\"tokenOverflow\":true", Duration.ofSeconds(15));
        assertThat(Long.parseLong(Http.jsonField(s, "token"))).isGreaterThan(3);
        assertThat(Http.jsonField(s, "tokenOverflowTotal")).isEqualTo("1");
        String metrics = agent.metrics();
        assertThat(metrics).contains("fencing_token_overflow_total{lock=\"overflow\"} 1.0");
        assertThat(metrics).containsPattern("fencing_token_headroom_ratio\\{lock=\"overflow\"\\} -");
        Thread.sleep(100);
        assertThat(agent.lastDecision()).startsWith("BLOCK TOKEN_OVERFLOW ");
      }
    }
  }
}
