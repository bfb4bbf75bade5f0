package dev.fencing.agent.startup;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigKey;
import dev.fencing.agent.config.JdkModules;
import dev.fencing.agent.lease.LeaseProviders;
import dev.fencing.agent.lease.LeaseKeeper;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.lease.TimedLeaseProvider;
import dev.fencing.agent.metrics.CoordinatorLatency;
import dev.fencing.agent.metrics.FencingSeries;
import dev.fencing.agent.metrics.OnDemandMetrics;
import dev.fencing.agent.metrics.otlp.OtlpExport;
import dev.fencing.agent.metrics.otlp.OtlpSettings;
import dev.fencing.agent.outbox.AgentOutbox;
import dev.fencing.agent.status.BuildInfo;
import dev.fencing.agent.instrumentation.api.SectionSpec;
import dev.fencing.agent.scope.LockRuntime;
import dev.fencing.agent.instrumentation.api.SectionLoading;
import dev.fencing.agent.scope.Scopes;
import dev.fencing.agent.status.Readiness;
import dev.fencing.agent.status.StatusJson;
import dev.fencing.agent.status.StatusServer;
import dev.fencing.agent.threads.AgentThreads;
import java.util.List;

/** The agent's running parts, started on a daemon thread after premain returned. */
final class AgentRuntime {
  private static final AgentLog LOG = AgentLog.get(AgentRuntime.class);
  /** Beyond fencing.shutdown.timeout, for the threads to notice and return. */
  private static final long SHUTDOWN_SLACK_MILLIS = 200;

  /** How long after start a declared section whose class has not loaded is logged. */
  private static final long SECTION_CHECK_MILLIS = 30_000;

  private final AgentConfig config;
  private final Scopes scopes;
  private final long premainNanos;
  private final java.lang.instrument.Instrumentation inst;
  private final List<LeaseKeeper> keepers = new java.util.concurrent.CopyOnWriteArrayList<>();
  private volatile StatusServer server;
  private volatile OtlpExport otlp;
  private volatile OnDemandMetrics metrics;
  private final Thread mainThread;
  private volatile AgentOutbox outbox;
  /** One histogram per lock this JVM campaigns for (the lock label), in the configuration's order. */
  private final List<CoordinatorLatency> latencies = new java.util.ArrayList<>();

  AgentRuntime(AgentConfig config, Scopes scopes, long premainNanos, java.lang.instrument.Instrumentation inst,
      Thread mainThread) {
    this.inst = inst;
    this.mainThread = mainThread;
    this.config = config;
    this.scopes = scopes;
    this.premainNanos = premainNanos;
    for (LockRuntime r : scopes.locks()) {
      latencies.add(new CoordinatorLatency(r.lock()));
    }
  }

  void start() {
    try {
      String when = ShutdownOrder.afterApplicationHooks(inst, this::shutdown, "fencing-agent-shutdown");
      LOG.debug("the lease is released at shutdown " + when);
      // Metrics even for a misconfigured agent: what it blocks is what the operator needs to see.
      BuildInfo build = BuildInfo.current(LeaseProviders.name(config).toLowerCase(java.util.Locale.ROOT));
      // Also when misconfigured: which build this is decides what to read next. Here, off premain: reading the
      // version costs premain nothing.
      LOG.info(build.describe());
      List<FencingSeries.Series> series = FencingSeries.of(scopes, build, config.leaseEnabled());
      if (config.httpPort() >= 0) {
        startEndpoint(series);
      }
      startOtlp(series);
      exposeCapturedLocks();
      // Independent of the lease and of the agent's own configuration: deliveries are decisions already committed.
      startOutbox();
      if (!config.valid()) {
        return; // FAILED; the endpoint still tells why
      }
      if (!config.leaseEnabled()) {
        LOG.info("started without a lease (fencing.lease.enabled=false): side effects carry inbound tokens only");
        return;
      }
      List<String> missing = JdkModules.missing(LeaseProviders.requiredJdkModules(config));
      if (!missing.isEmpty()) {
        // Campaigning would only fail on every attempt with a ClassNotFoundException: say once what to change.
        String problem = "this Java runtime lacks the JDK module " + String.join(", ", missing) + " that the "
            + LeaseProviders.name(config) + " client needs: add it to the runtime (jlink --add-modules "
            + String.join(",", missing) + ", or to --limit-modules)";
        LOG.error(problem + "; no lease is taken, side effects follow fencing.fail-mode");
        scopes.failed(problem);
        return;
      }
      // One keeper, coordinator session and lease per lock: each lock's grant, deadline and loss stay its own (the keeper's
      // timing is per lease), so losing one lock never ends another's grant. The cost is one coordinator client per lock,
      // bounded by the configuration.
      for (LockRuntime r : scopes.locks()) {
        r.state().loadPersisted();
        CoordinatorLatency latency = latencyOf(r.lock());
        LeaseKeeper k = new LeaseKeeper(config, r.lock(), r.state(),
            () -> new TimedLeaseProvider(LeaseProviders.create(config), latency));
        keepers.add(k);
        k.start();
        LOG.info("started: lock '" + r.lock() + "' (" + scopeOf(r) + "), " + coordinatorOf(config)
            + ", lease ttl " + config.display(ConfigKey.LEASE_TTL) + ", mode " + config.display(ConfigKey.MODE)
            + ", holder " + config.holderId());
      }
      if (!config.sections().isEmpty()) {
        AgentThreads.newThread(this::checkSectionsLoaded, "fencing-agent-sections").start();
      }
    } catch (Throwable t) {
      LOG.error("failed to start; side effects follow fencing.fail-mode", t);
      scopes.failed("agent failed to start: " + AgentLog.describe(t));
    }
  }

  private void startOutbox() {
    try {
      outbox = AgentOutbox.start(config, mainThread, this::expose);
    } catch (Throwable t) {
      LOG.warn("cannot start the outbox relay: " + AgentLog.describe(t) + " (the agent is not affected)");
    }
  }

  private CoordinatorLatency latencyOf(String lock) {
    for (CoordinatorLatency l : latencies) {
      if (l.lock().equals(lock)) {
        return l;
      }
    }
    throw new IllegalStateException("no latency histogram for lock " + lock);
  }

  private static String coordinatorOf(AgentConfig config) {
    return config.coordinator() == AgentConfig.Coordinator.ZOOKEEPER
        ? "ZooKeeper " + config.display(ConfigKey.ZOOKEEPER_CONNECT)
        : "etcd " + config.display(ConfigKey.ETCD_ENDPOINTS);
  }

  private static String scopeOf(LockRuntime r) {
    StringBuilder sb = new StringBuilder(r.jvmWide() ? "JVM-wide" : "");
    for (SectionSpec s : r.sections()) {
      sb.append(sb.length() == 0 ? "sections " : r.jvmWide() && sb.indexOf("sections") < 0 ? ", sections " : ", ")
          .append(s.className()).append('#').append(s.method());
    }
    return sb.toString();
  }

  /** A declared section that is not in place a while after start is worth one log line (never a failure). */
  private void checkSectionsLoaded() {
    try {
      Thread.sleep(SECTION_CHECK_MILLIS);
    } catch (InterruptedException e) {
      return;
    }
    for (SectionSpec s : config.sections()) {
      if (!SectionLoading.loaded(s)) {
        LOG.warn("section " + s + ": " + SectionLoading.status(s) + " " + SECTION_CHECK_MILLIS / 1000
            + " s after start; it is instrumented when its class loads (see /status locks[].sections)");
      }
    }
  }

  /**
   * Each application lock the agent captures gets the side-effect series of its own lock label, in the endpoint and
   * the OTLP export alike, from its capture on (bounded by fencing.capture.max-locks).
   */
  private void exposeCapturedLocks() {
    scopes.captured().onCapture(r -> expose(FencingSeries.ofCaptured(r, scopes.rejections())));
  }

  /** Adds series to the endpoint and the OTLP export alike, from their next scrape or export on. */
  private void expose(List<FencingSeries.Series> more) {
    OnDemandMetrics m = metrics;
    if (m != null) {
      m.add(more);
    }
    OtlpExport o = otlp;
    if (o != null) {
      o.add(more);
    }
  }

  private void startEndpoint(List<FencingSeries.Series> series) {
    try {
      // Built at the first scrape: the registry's classes would load while the application starts.
      OnDemandMetrics metrics = new OnDemandMetrics(series, latencies);
      this.metrics = metrics;
      server = new StatusServer(config.httpHost(), config.httpPort(),
          () -> StatusJson.render(scopes, config, premainNanos), metrics::scrape,
          () -> Readiness.of(scopes, config.readyRequiresHolding()));
      LOG.info("status endpoint on http://" + config.httpHost() + ":" + server.port()
          + "/status, /metrics, /ready and /live");
    } catch (Throwable t) {
      // The endpoint is for operators; its failure must not stop fencing.
      LOG.error("cannot start the status endpoint on " + config.httpHost() + ":" + config.httpPort()
          + (JdkModules.missing(List.of("jdk.httpserver")).isEmpty() ? ""
              : " (this Java runtime lacks the JDK module jdk.httpserver it is served with: add it, or set"
                  + " fencing.http.port=off)"), t);
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
      otlp = OtlpExport.start(s, series, latencies, OtlpExport.resource(System.getProperties(), System.getenv(), config.holderId()));
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
    AgentOutbox relays = outbox;
    if (relays != null) {
      // First: a relay stops claiming and marks the batch in hand; what it cannot finish, another relay delivers.
      relays.stop(remainingMillis(deadline) / 2);
    }
    // Every lock is given back at once (one closer each), all within the one shutdown timeout.
    List<Thread> closers = new java.util.ArrayList<>();
    for (LeaseKeeper k : keepers) {
      Thread closer = AgentThreads.newThread(k::close, "fencing-agent-release");
      closer.start();
      closers.add(closer);
    }
    for (Thread closer : closers) {
      try {
        closer.join(Math.max(1, remainingMillis(deadline)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
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
