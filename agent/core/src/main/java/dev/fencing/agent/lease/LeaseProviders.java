package dev.fencing.agent.lease;

import dev.fencing.agent.config.AgentConfig;
import java.util.List;

/**
 * The provider of fencing.coordinator. Each coordinator's client is referenced from its own provider class only, so
 * a JVM that uses etcd never loads a ZooKeeper class (and the other way round, except jetcd's shared netty).
 */
public final class LeaseProviders {
  private LeaseProviders() {}

  public static LeaseProvider create(AgentConfig config) throws Exception {
    switch (config.coordinator()) {
      case ZOOKEEPER:
        return new ZooKeeperLeaseProvider(config);
      case ETCD:
      default:
        return new EtcdLeaseProvider(config);
    }
  }

  /** The coordinator and where it is, for log lines: "etcd http://..." or "ZooKeeper zk1:2181,...". */
  public static String describe(AgentConfig config) {
    return config.coordinator() == AgentConfig.Coordinator.ZOOKEEPER
        ? "ZooKeeper " + config.zookeeperConnect()
        : "etcd " + config.etcdEndpoints();
  }

  /**
   * The JDK modules the coordinator's client needs beyond java.base: gRPC (jetcd) logs through java.util.logging; the
   * ZooKeeper client's connection sets up SASL. A runtime without them (a jlink image) cannot hold a lease.
   */
  public static List<String> requiredJdkModules(AgentConfig config) {
    return config.coordinator() == AgentConfig.Coordinator.ZOOKEEPER
        ? List.of("java.security.sasl")
        : List.of("java.logging");
  }

  /** The coordinator's name in messages: "etcd" or "ZooKeeper". */
  public static String name(AgentConfig config) {
    return config.coordinator() == AgentConfig.Coordinator.ZOOKEEPER ? "ZooKeeper" : "etcd";
  }
}
