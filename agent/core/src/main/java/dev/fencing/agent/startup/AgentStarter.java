package dev.fencing.agent.startup;

import dev.fencing.agent.threads.AgentThreads;
import dev.fencing.agent.bootstrap.CoreEntry;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.InstrumentationInstaller;
import dev.fencing.agent.bootstrap.Sections;
import dev.fencing.agent.scope.Scopes;
import dev.fencing.agent.bootstrap.Captures;
import dev.fencing.agent.bootstrap.ShedLocks;
import dev.fencing.agent.bootstrap.QuartzJobs;
import dev.fencing.agent.scope.QuartzRuns;
import dev.fencing.agent.bootstrap.FencingApi;
import dev.fencing.agent.scope.FencedMethods;
import dev.fencing.agent.lease.LeaseKeeper;
import dev.fencing.agent.lease.LeaseProviders;
import dev.fencing.agent.scope.LockRuntime;
import dev.fencing.agent.scope.ShedLockRuns;
import java.lang.instrument.Instrumentation;

/**
 * What premain does inside the isolated loader, and nothing more: read the configuration, install the policy behind
 * the bootstrap bridge, and hand everything slow (etcd, metrics, the HTTP endpoint) to a daemon thread. The
 * application's startup never waits for etcd.
 */
public final class AgentStarter {
  private static final AgentLog LOG = AgentLog.get(AgentStarter.class);

  static {
    CoreEntry.offer(new Entry()); // the entry point takes it once this class is initialised
  }

  /** What the entry point calls: {@link #start}. */
  private static final class Entry implements CoreEntry.Start {
    @Override
    public void start(String agentArgs, Instrumentation inst, boolean dynamic, long startNanos) {
      AgentStarter.start(agentArgs, inst, dynamic, startNanos);
    }
  }

  private AgentStarter() {}

  public static void start(String agentArgs, Instrumentation inst, boolean dynamic, long startNanos) {
    BundledLibraries.configure();
    AgentConfig config = ConfigLoader.load(agentArgs);
    AgentLog.setLevel(config.logLevel());
    // One token state and policy per lock (the JVM-wide one, each section's), and the gate that routes a side effect
    // to the lock whose scope its thread is in.
    Scopes scopes = Scopes.of(config);
    Fencing.install(scopes.gate());
    Sections.install(scopes.sectionTable());
    Captures.install(scopes.captured());
    if (config.shedLockEnabled()) {
      ShedLocks.install(shedLockRuns(config, scopes));
    }
    if (config.quartzJobsDeclared()) {
      QuartzJobs.install(new QuartzRuns(config, scopes.captured(), LeaseProviders.name(config),
          runCampaign(config, "the Quartz job ended")));
    }
    FencingApi.install(fencedMethods(config, scopes, inst));
    for (String warning : config.warnings()) {
      LOG.warn("configuration: " + warning);
    }
    if (!config.valid()) {
      for (String problem : config.problems()) {
        LOG.error("invalid configuration: " + problem);
      }
      scopes.failed("invalid configuration: " + String.join("; ", config.problems()));
      LOG.error("the application starts without a lease; side effects are "
          + (config.failMode() == AgentConfig.FailMode.OPEN ? "let through untagged (fencing.fail-mode=open)" : "blocked (fencing.fail-mode=closed)"));
    }
    // Hooks go in now, so classes the application loads from here on are fenced; even a misconfigured agent
    // installs them: fail-mode decides what they do.
    try {
      // Exempt side effects belong to no lock: counted under what decides outside every section.
      AgentContext context = new AgentContext(config, scopes.rejections(), scopes.outside().counters(),
          scopes.inventory(), inst);
      InstrumentationInstaller.install(inst, config, context, dynamic);
    } catch (Throwable t) {
      LOG.error("could not install the instrumentation; side effects are not fenced", t);
    }
    long premainNanos = System.nanoTime() - startNanos;
    if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
      LOG.debug((dynamic ? "agentmain" : "premain") + " took " + premainNanos / 1000 + " us");
    }
    // Last step: from here on, everything runs on daemon threads.
    // premain runs on the application's main thread, whose context class loader becomes the application's (the
    // outbox relay finds the application's JDBC driver there); an attached agent runs on the attach listener's.
    Thread mainThread = dynamic ? null : Thread.currentThread();
    AgentThreads.newThread(new StartRuntime(new AgentRuntime(config, scopes, premainNanos, inst, mainThread)),
        "fencing-agent-init").start();
  }

  // What premain hands on are classes of their own rather than lambdas or method references, which premain would spin
  // (one class each, on every start).

  /** {@link AgentRuntime#start} on the agent's init thread. */
  private static final class StartRuntime implements Runnable {
    private final AgentRuntime runtime;

    StartRuntime(AgentRuntime runtime) {
      this.runtime = runtime;
    }

    @Override
    public void run() {
      runtime.start();
    }
  }

  /**
   * fencing.shedlock.enabled: each ShedLock task campaigns for the agent's lock of its name with a keeper, lease and
   * coordinator session of its own, given back when the task ends. A misconfigured agent, or one without a lease, takes
   * no lock: the tasks fail rather than run unfenced.
   */
  private static ShedLockRuns shedLockRuns(AgentConfig config, Scopes scopes) {
    return new ShedLockRuns(config, scopes.captured(), LeaseProviders.name(config),
        runCampaign(config, "the ShedLock task ended"));
  }

  /**
   * The campaign of a scheduler's run (fencing.shedlock.enabled, fencing.quartz.jobs): a keeper, lease and
   * coordinator session of its own, given back when the run ends ({@code ended} told as the grant's end). A
   * misconfigured agent, or one without a lease, takes no lock: the runs fail rather than run unfenced.
   */
  private static ShedLockRuns.Campaign runCampaign(AgentConfig config, String ended) {
    return lock -> {
      if (!config.valid() || !config.leaseEnabled()) {
        throw new IllegalStateException(config.valid() ? "fencing.lease.enabled=false" : "invalid configuration");
      }
      lock.state().loadPersisted();
      LeaseKeeper keeper = new LeaseKeeper(config, lock.lock(), lock.state(), () -> LeaseProviders.create(config));
      keeper.start();
      return () -> keeper.close("lease released: " + ended);
    };
  }

  /**
   * The application API's {@code @Fenced} methods: a lock the configuration does not name gets a keeper, lease and
   * coordinator session of its own when its first annotated method is defined, given back after the application's
   * shutdown hooks (as the configured locks are).
   */
  private static FencedMethods fencedMethods(AgentConfig config, Scopes scopes, Instrumentation inst) {
    return new FencedMethods(config, scopes, LeaseProviders.name(config), new FencedMethodCampaign(config, inst));
  }

  /** The campaign of a lock first named by a {@code @Fenced} method: see {@link #fencedMethods}. */
  private static final class FencedMethodCampaign implements ShedLockRuns.Campaign {
    private final AgentConfig config;
    private final Instrumentation inst;

    FencedMethodCampaign(AgentConfig config, Instrumentation inst) {
      this.config = config;
      this.inst = inst;
    }

    @Override
    public AutoCloseable start(LockRuntime lock) {
      lock.state().loadPersisted();
      LeaseKeeper keeper = new LeaseKeeper(config, lock.lock(), lock.state(), () -> LeaseProviders.create(config));
      keeper.start();
      ShutdownOrder.afterApplicationHooks(inst, keeper::close, "fencing-agent-release");
      return () -> keeper.close();
    }
  }
}
