package dev.fencing.agent.instrumentation.curator;

import static dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation.method;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;
import java.util.function.Consumer;

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
        new NamedTypeInstrumentation("Curator", SEMAPHORE, new SemaphoreMethods()),
        new NamedTypeInstrumentation("Curator", SEMAPHORE_MUTEX, new SemaphoreMutexMethods()),
        new NamedTypeInstrumentation("Curator", LEADER_LATCH, new LeaderLatchMethods()),
        new NamedTypeInstrumentation("Curator", LEADER_SELECTOR, new LeaderSelectorMethods()));
  }

  // The advice of each class, applied when the class loads; classes of their own rather than lambdas, which premain
  // would spin (one class each, on every start).

  /** InterProcessSemaphoreV2. */
  private static final class SemaphoreMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("acquire", 3), SemaphoreAcquireAdvice.class);
      t.applyAdvice(method("returnLease", 1), ReturnLeaseAdvice.class);
    }
  }

  /** InterProcessSemaphoreMutex. */
  private static final class SemaphoreMutexMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("release", 0), SemaphoreMutexReleaseAdvice.class);
    }
  }

  /** LeaderLatch. */
  private static final class LeaderLatchMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("setLeadership", 1), SetLeadershipAdvice.class);
    }
  }

  /** LeaderSelector. */
  private static final class LeaderSelectorMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("doWork", 0), SelectorWorkAdvice.class);
      t.applyAdvice(method("close", 0), SelectorCloseAdvice.class);
    }
  }

  @Override
  public void install(AgentContext context) {
    // CapturedLocks is installed by the agent core for every capture; nothing of this module's own to install.
  }
}
