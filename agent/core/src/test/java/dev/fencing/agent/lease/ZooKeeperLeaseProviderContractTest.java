package dev.fencing.agent.lease;

import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.testing.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/** The lease provider contract against a real ZooKeeper server (an ensemble of one). */
class ZooKeeperLeaseProviderContractTest extends LeaseProviderContract {
  private ZooKeeperEnsemble zk;

  @Override
  protected int startCoordinator() {
    zk = ZooKeeperEnsemble.start(1);
    return zk.server(0).clientPort();
  }

  @Override
  protected void stopCoordinator() {
    if (zk != null) {
      zk.close();
    }
  }

  @Override
  protected LeaseProvider newProvider(int port, Duration ttl) throws Exception {
    return new ZooKeeperLeaseProvider(ConfigLoader.load("lock=contract,coordinator=zookeeper,zookeeper.connect=127.0.0.1:"
        + port + ",zookeeper.path=/contract,etcd.timeout=" + TIMEOUT.toMillis() + "ms,lease.ttl=" + ttl.toMillis()
        + "ms,shutdown.timeout=500ms", new Properties(), Map.of()));
  }

  @Override
  protected void deleteFromOutside(String key) throws Exception {
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper z = new ZooKeeper(zk.connectString(), 10_000, event -> {
      if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
        connected.countDown();
      }
    });
    try {
      if (!connected.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("no ZooKeeper session to delete " + key + " with");
      }
      z.delete(key, -1);
    } finally {
      z.close();
    }
  }

  @Override
  protected void wipeCoordinator() {
    zk.wipeAndRestart();
  }

  @Override
  protected boolean holderReportsRemainingTtl() {
    return false;
  }

  @Override
  protected boolean wipeChangesClusterId() {
    return false;
  }
}
