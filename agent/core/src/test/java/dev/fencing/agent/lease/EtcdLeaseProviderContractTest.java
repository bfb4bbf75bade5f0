package dev.fencing.agent.lease;

import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.testing.EtcdCluster;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;

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
}
