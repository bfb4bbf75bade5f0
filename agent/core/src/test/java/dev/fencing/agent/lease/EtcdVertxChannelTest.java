package dev.fencing.agent.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.testing.EtcdCluster;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The etcd lease provider on jetcd's own Vert.x channel: the path taken when the bundled jetcd's channel cannot be
 * set ({@link EtcdChannel#installable()} false), forced here. Against a real one-node etcd, a lease is granted, held
 * past its TTL by keepalives and revoked, as another client sees it; the provider's Vert.x threads end with it.
 */
class EtcdVertxChannelTest {
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private static EtcdCluster etcd;

  @BeforeAll
  static void startEtcd() {
    etcd = EtcdCluster.single();
  }

  @AfterAll
  static void stopEtcd() {
    if (etcd != null) {
      etcd.close();
    }
  }

  private static EtcdLeaseProvider provider(boolean ownChannel) throws Exception {
    return new EtcdLeaseProvider(ConfigLoader.load("lock=vertx,etcd.endpoints=http://127.0.0.1:"
        + etcd.node(0).clientPort() + ",etcd.key-prefix=/vertx/,etcd.timeout=" + TIMEOUT.toMillis()
        + "ms,lease.ttl=" + TTL.toMillis() + "ms", new Properties(), Map.of()), ownChannel);
  }

  @Test
  void aLeaseIsGrantedKeptAliveAndRevokedOnJetcdsVertxChannel() throws Exception {
    Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
    try (EtcdLeaseProvider observer = provider(true)) {
      List<Thread> vertxThreads;
      try (EtcdLeaseProvider p = provider(false)) {
        assertThat(p.clusterId(TIMEOUT)).isEqualTo(observer.clusterId(TIMEOUT));
        LeaseProvider.Lease lease = p.grant(TTL, TIMEOUT);
        assertThat(lease.ttlSeconds).isEqualTo(TTL.toSeconds());
        LeaseProvider.Acquired acquired = p.campaign("vertx", lease.id, "vertx-holder").get();
        assertThat(acquired.key).startsWith("/vertx/vertx/");

        List<Thread> started = Thread.getAllStackTraces().keySet().stream().filter(t -> !before.contains(t))
            .collect(Collectors.toList());
        List<String> names = started.stream().map(Thread::getName).collect(Collectors.toList());
        assertThat(names).as("the provider's connection runs on jetcd's Vert.x event loop")
            .anyMatch(n -> n.startsWith("vert.x-eventloop-thread-"));
        assertThat(started).as("threads started by the provider").allMatch(Thread::isDaemon);
        vertxThreads = started.stream().filter(t -> t.getName().startsWith("vert.x-") || t.getName().startsWith("vertx-"))
            .collect(Collectors.toList());

        // Held past its TTL: four keepalives a second apart, each renewing the lease to its full TTL.
        long end = System.nanoTime() + TTL.toNanos() + Duration.ofSeconds(1).toNanos();
        while (System.nanoTime() < end) {
          assertThat(p.keepAlive(lease.id).get()).as("TTL after a keepalive").isEqualTo(TTL.toSeconds());
          Thread.sleep(1_000);
        }
        Optional<LeaseProvider.Holder> holder = observer.holder("vertx", TIMEOUT);
        assertThat(holder).as("the holder another client sees past the TTL").isPresent();
        assertThat(holder.get().holderId).isEqualTo("vertx-holder");
        assertThat(holder.get().leaseId).isEqualTo(lease.id);
        assertThat(holder.get().token).isEqualTo(acquired.token);
        assertThat(holder.get().remainingTtlSeconds).isPositive();

        assertThat(p.revoke(lease.id, TIMEOUT)).isTrue();
        assertThat(observer.holder("vertx", TIMEOUT)).as("the holder after the revoke").isEmpty();
        assertThat(etcd.etcdctl("get", "--prefix", "/vertx/")).as("keys left under the prefix").isBlank();
        assertThat(p.keepAlive(lease.id).get()).as("a keepalive of the revoked lease").isZero();
      }
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (vertxThreads.stream().anyMatch(Thread::isAlive) && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(vertxThreads).as("Vert.x threads after the provider closed").noneMatch(Thread::isAlive);
    }
  }
}
