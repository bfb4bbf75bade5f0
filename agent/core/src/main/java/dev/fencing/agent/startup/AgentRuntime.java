package dev.fencing.agent.startup;

import dev.fencing.agent.threads.AgentThreads;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.lease.EtcdLeaseProvider;
import dev.fencing.agent.lease.LeaseKeeper;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.metrics.AgentMetrics;
import dev.fencing.agent.policy.RejectionCounters;
import dev.fencing.agent.policy.SideEffectCounters;
import dev.fencing.agent.status.StatusJson;
import dev.fencing.agent.status.StatusServer;
import dev.fencing.agent.token.TokenState;

/** The agent's running parts, started on a daemon thread after premain returned. */
final class AgentRuntime {
  private static final AgentLog LOG = AgentLog.get(AgentRuntime.class);

  private final AgentConfig config;
  private final TokenState state;
  private final SideEffectCounters counters;
  private final RejectionCounters rejections;
  private final long premainNanos;
  private volatile LeaseKeeper keeper;
  private volatile StatusServer server;

  AgentRuntime(AgentConfig config, TokenState state, SideEffectCounters counters, RejectionCounters rejections,
      long premainNanos) {
    this.config = config;
    this.state = state;
    this.counters = counters;
    this.rejections = rejections;
    this.premainNanos = premainNanos;
  }

  void start() {
    try {
      if (config.httpPort() >= 0) {
        startEndpoint();
      }
      if (!config.valid()) {
        return; // FAILED; the endpoint still tells why
      }
      if (!config.leaseEnabled()) {
        LOG.info("started without a lease (fencing.lease.enabled=false): side effects carry inbound tokens only");
        return;
      }
      state.loadPersisted();
      keeper = new LeaseKeeper(config, state, () -> new EtcdLeaseProvider(config));
      Runtime.getRuntime().addShutdownHook(AgentThreads.newThread(this::shutdown, "fencing-agent-shutdown"));
      keeper.start();
      LOG.info("started: lock '" + config.lock() + "', etcd " + config.display(dev.fencing.agent.config.ConfigKey.ETCD_ENDPOINTS)
          + ", lease ttl " + config.display(dev.fencing.agent.config.ConfigKey.LEASE_TTL) + ", mode "
          + config.display(dev.fencing.agent.config.ConfigKey.MODE) + ", holder " + config.holderId());
    } catch (Throwable t) {
      LOG.error("failed to start; side effects follow fencing.fail-mode", t);
      state.failed("agent failed to start: " + AgentLog.describe(t));
    }
  }

  private void startEndpoint() {
    try {
      AgentMetrics metrics = new AgentMetrics(state, counters, rejections);
      server = new StatusServer(config.httpHost(), config.httpPort(),
          () -> StatusJson.render(state, config, premainNanos), metrics::scrape);
      LOG.info("status endpoint on http://" + config.httpHost() + ":" + server.port() + "/status and /metrics");
    } catch (Throwable t) {
      // The endpoint is for operators; its failure must not stop fencing.
      LOG.error("cannot start the status endpoint on " + config.httpHost() + ":" + config.httpPort(), t);
    }
  }

  /** Gives the lease back within fencing.shutdown.timeout, so a successor need not wait out the TTL. */
  private void shutdown() {
    LeaseKeeper k = keeper;
    if (k == null) {
      return;
    }
    Thread closer = AgentThreads.newThread(k::close, "fencing-agent-release");
    closer.start();
    try {
      closer.join(config.shutdownTimeout().toMillis() + 200);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    StatusServer s = server;
    if (s != null) {
      s.close();
    }
  }
}
