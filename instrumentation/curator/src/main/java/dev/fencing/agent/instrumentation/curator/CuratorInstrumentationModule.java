package dev.fencing.agent.instrumentation.curator;

import static dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation.method;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;

/**
 * Capture of the application's Curator locks (docs/DESIGN.md section 4, "Captured locks"): Curator's lock core
 * ({@code LockInternals}, behind InterProcessMutex and LeaderSelector), the semaphore of one lease (behind
 * InterProcessSemaphoreMutex), LeaderLatch and LeaderSelector (whose mutex is a leadership) report acquisitions,
 * leadership, releases and closes. How long the session is
 * known alive is told by the syncs the core sends on the application's ZooKeeper handle
 * ({@code LockLibraries.zooKeeperSync}). The hook is the agent core's {@code CapturedLocks}, installed at startup.
 * Switch: fencing.instrumentation.curator.enabled.
 */
public final class CuratorInstrumentationModule implements InstrumentationModule {
  static final String RECIPES = "org.apache.curator.framework.recipes.";
  static final String SEMAPHORE = RECIPES + "locks.InterProcessSemaphoreV2";
  static final String SEMAPHORE_MUTEX = RECIPES + "locks.InterProcessSemaphoreMutex";
  static final String LEADER_LATCH = RECIPES + "leader.LeaderLatch";
  static final String LEADER_SELECTOR = RECIPES + "leader.LeaderSelector";

  @Override
  public String name() {
    return "curator";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new LockInternalsInstrumentation(),
        new NamedTypeInstrumentation("Curator", SEMAPHORE, t -> {
          t.applyAdvice(method("acquire", 3), SemaphoreAcquireAdvice.class);
          t.applyAdvice(method("returnLease", 1), ReturnLeaseAdvice.class);
        }),
        new NamedTypeInstrumentation("Curator", SEMAPHORE_MUTEX, t -> t.applyAdvice(
            method("release", 0), SemaphoreMutexReleaseAdvice.class)),
        new NamedTypeInstrumentation("Curator", LEADER_LATCH, t -> t.applyAdvice(
            method("setLeadership", 1), SetLeadershipAdvice.class)),
        new NamedTypeInstrumentation("Curator", LEADER_SELECTOR, t -> {
          t.applyAdvice(method("doWork", 0), SelectorWorkAdvice.class);
          t.applyAdvice(method("close", 0), SelectorCloseAdvice.class);
        }));
  }

  @Override
  public void install(AgentContext context) {
    // CapturedLocks is installed by the agent core for every capture; nothing of this module's own to install.
  }
}
