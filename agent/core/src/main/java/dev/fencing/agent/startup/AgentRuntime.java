package dev.fencing.agent.startup;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigKey;
import dev.fencing.agent.lease.LeaseProviders;
import dev.fencing.agent.lease.LeaseKeeper;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.metrics.AgentMetrics;
import dev.fencing.agent.metrics.FencingSeries;
import dev.fencing.agent.metrics.otlp.OtlpExport;
import dev.fencing.agent.metrics.otlp.OtlpSettings;
import dev.fencing.agent.policy.RejectionCounters;
import dev.fencing.agent.policy.SideEffectCounters;
import dev.fencing.agent.status.StatusJson;
import dev.fencing.agent.status.StatusServer;
import dev.fencing.agent.threads.AgentThreads;
import dev.fencing.agent.token.TokenState;
import java.util.List;

/** The agent's running parts, started on a daemon thread after premain returned. */
final class AgentRuntime {
  private static final AgentLog LOG = AgentLog.get(AgentRuntime.class);
  /** Beyond fencing.shutdown.timeout, for the threads to notice and return. */
  private static final long SHUTDOWN_SLACK_MILLIS = 200;

  private final AgentConfig config;
  private final TokenState state;
  private final SideEffectCounters counters;
  private final RejectionCounters rejections;
  private final long premainNanos;
  private final java.lang.instrument.Instrumentation inst;
  private volatile LeaseKeeper keeper;
  private volatile StatusServer server;
  private volatile OtlpExport otlp;

  AgentRuntime(AgentConfig config, TokenState state, SideEffectCounters counters, RejectionCounters rejections,
      long premainNanos, java.lang.instrument.Instrumentation inst) {
    this.inst = inst;
    this.config = config;
    this.state = state;
    this.counters = counters;
    this.rejections = rejections;
    this.premainNanos = premainNanos;
  }

  void start() {
    try {
      String when = ShutdownOrder.afterApplicationHooks(inst, this::shutdown, "fencing-agent-shutdown");
      LOG.debug("the lease is released at shutdown " + when);
      // Metrics even for a misconfigured agent: what it blocks is what the operator needs to see.
      List<FencingSeries.Series> series = FencingSeries.of(state, counters, rejections);
      if (config.httpPort() >= 0) {
        startEndpoint(series);
      }
      startOtlp(series);
      if (!config.valid()) {
        return; // FAILED; the endpoint still tells why
      }
      if (!config.leaseEnabled()) {
        LOG.info("started without a lease (fencing.lease.enabled=false): side effects carry inbound tokens only");
        return;
      }
      state.loadPersisted();
      keeper = new LeaseKeeper(config, state, () -> LeaseProviders.create(config));
      keeper.start();
      LOG.info("started: lock '" + config.lock() + "', " + (config.coordinator() == dev.fencing.agent.config.AgentConfig.Coordinator.ZOOKEEPER
          ? "ZooKeeper " + config.display(ConfigKey.ZOOKEEPER_CONNECT) : "etcd " + config.display(ConfigKey.ETCD_ENDPOINTS))
          + ", lease ttl " + config.display(ConfigKey.LEASE_TTL) + ", mode " + config.display(ConfigKey.MODE)
          + ", holder " + config.holderId());
    } catch (Throwable t) {
      LOG.error("failed to start; side effects follow fencing.fail-mode", t);
      state.failed("agent failed to start: " + AgentLog.describe(t));
    }
  }

  private void startEndpoint(List<FencingSeries.Series> series) {
    try {
      AgentMetrics metrics = new AgentMetrics(series);
      server = new StatusServer(config.httpHost(), config.httpPort(),
          () -> StatusJson.render(state, config, premainNanos), metrics::scrape);
      LOG.info("status endpoint on http://" + config.httpHost() + ":" + server.port() + "/status and /metrics");
    } catch (Throwable t) {
      // The endpoint is for operators; its failure must not stop fencing.
      LOG.error("cannot start the status endpoint on " + config.httpHost() + ":" + config.httpPort(), t);
    }
  }

  private void startOtlp(List<FencingSeries.Series> series) {
    try {
      OtlpSettings.Resolution r = OtlpSettings.resolve(config, System.getProperties(), System.getenv());
      r.warnings().forEach(LOG::warn);
      OtlpSettings s = r.settings();
      if (s == null) {
        return;
      }
      otlp = OtlpExport.start(s, series, OtlpExport.resource(System.getProperties(), System.getenv(), config.holderId()));
      LOG.info("OTLP metrics export to " + s.endpoint() + " every " + s.interval().toMillis() + " ms (from "
          + s.origin() + ")");
    } catch (Throwable t) {
      // Like the endpoint: for operators, never a reason to stop fencing.
      LOG.error("cannot start the OTLP metrics export", t);
    }
  }

  /**
   * After the application's shutdown hooks ({@link ShutdownOrder}), within fencing.shutdown.timeout: gives the lease
   * back, so a successor need not wait out the TTL, then pushes the last metrics (which then show the lease released).
   */
  private void shutdown() {
    long deadline = System.nanoTime() + (config.shutdownTimeout().toMillis() + SHUTDOWN_SLACK_MILLIS) * 1_000_000;
    LeaseKeeper k = keeper;
    if (k != null) {
      Thread closer = AgentThreads.newThread(k::close, "fencing-agent-release");
      closer.start();
      try {
        closer.join(Math.max(1, remainingMillis(deadline)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    OtlpExport o = otlp;
    if (o != null) {
      try {
        o.shutdown(remainingMillis(deadline));
      } catch (Throwable t) {
        LOG.warn("OTLP export: last flush failed", t);
      }
    }
    StatusServer s = server;
    if (s != null) {
      s.close();
    }
  }

  private static long remainingMillis(long deadlineNanos) {
    return Math.max(0, (deadlineNanos - System.nanoTime()) / 1_000_000);
  }
}
