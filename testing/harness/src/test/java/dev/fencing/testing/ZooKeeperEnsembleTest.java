package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The ensemble the ZooKeeper ITs rely on: a leader, a new one after the leader dies, serving again after a wipe. */
class ZooKeeperEnsembleTest {
  @Test
  void electsANewLeaderWhenTheLeaderIsKilledAndServesAgainAfterAWipe() {
    try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.start(3)) {
      assertThat(zk.connectString().split(",")).hasSize(3);
      ZooKeeperEnsemble.Server first = zk.leader();
      assertThat(zk.modes().values()).containsExactlyInAnyOrder("leader", "follower", "follower");

      first.kill();
      zk.awaitLeader(Duration.ofSeconds(30));
      ZooKeeperEnsemble.Server second = zk.leader();
      assertThat(second.id()).isNotEqualTo(first.id());

      first.start();
      zk.awaitLeader(Duration.ofSeconds(30));
      assertThat(zk.modes().values()).containsExactlyInAnyOrder("leader", "follower", "follower");

      zk.wipeAndRestart();
      assertThat(zk.modes().values()).containsExactlyInAnyOrder("leader", "follower", "follower");
    }
  }
}
