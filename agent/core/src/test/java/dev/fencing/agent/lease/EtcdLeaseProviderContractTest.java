package dev.fencing.agent.lease;

import dev.fencing.agent.config.ConfigLoader;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.EtcdCluster;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The lease provider contract against a real one-node etcd. */
class EtcdLeaseProviderContractTest extends LeaseProviderContract {
  private EtcdCluster etcd;

  @Override
  protected int startCoordinator() {
    etcd = EtcdCluster.single();
    return etcd.node(0).clientPort();
  }

  @Override
  protected void stopCoordinator() {
    if (etcd != null) {
      etcd.close();
    }
  }

  @Override
  protected LeaseProvider newProvider(int port, Duration ttl) throws Exception {
    return new EtcdLeaseProvider(ConfigLoader.load("lock=contract,etcd.endpoints=http://127.0.0.1:" + port
        + ",etcd.key-prefix=/contract/,etcd.timeout=" + TIMEOUT.toMillis() + "ms,lease.ttl=" + ttl.toMillis() + "ms",
        new Properties(), Map.of()));
  }

  @Override
  protected void deleteFromOutside(String key) {
    etcd.etcdctl("del", key);
  }

  @Override
  protected void wipeCoordinator() {
    etcd.wipeAndRestart();
  }

  @Override
  protected boolean holderReportsRemainingTtl() {
    return true;
  }

  @Override
  protected boolean wipeChangesClusterId() {
    return true;
  }

  /**
   * What holding a lock through jetcd starts in the application's JVM: one daemon event-loop thread of the agent
   * for the connection, and no Vert.x instance (no event loop, worker pool or blocked-thread checker of its own).
   */
  @Test
  void holdingALockStartsOneDaemonEventLoopAndNoVertx() throws Exception {
    Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
    try (LeaseProvider p = newProvider(etcd.node(0).clientPort(), Duration.ofSeconds(5))) {
      LeaseProvider.Lease lease = p.grant(Duration.ofSeconds(5), TIMEOUT);
      p.campaign("threads", lease.id, "threads-holder").get();
      assertThat(p.keepAlive(lease.id).get()).isPositive();
      List<Thread> started = Thread.getAllStackTraces().keySet().stream().filter(t -> !before.contains(t))
          .collect(Collectors.toList());
      List<String> names = started.stream().map(Thread::getName).collect(Collectors.toList());
      assertThat(names).as("threads started by the provider").noneMatch(n -> n.startsWith("vert.x-") || n.startsWith("vertx-"));
      assertThat(names).as("threads started by the provider").filteredOn(n -> n.startsWith("fencing-agent-etcd-"))
          .hasSize(1);
      assertThat(started).as("threads started by the provider").allMatch(Thread::isDaemon);
      p.revoke(lease.id, TIMEOUT);
    }
  }
}
