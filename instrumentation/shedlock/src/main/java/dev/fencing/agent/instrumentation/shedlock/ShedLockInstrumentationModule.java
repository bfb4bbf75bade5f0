package dev.fencing.agent.instrumentation.shedlock;

import static dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation.method;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;

/**
 * ShedLock's tasks as scopes of the agent's locks (docs/DESIGN.md section 4, "ShedLock"). Every way ShedLock runs a
 * task (the Spring method proxy and scheduler proxy of {@code @SchedulerLock}, a direct {@code LockingTaskExecutor})
 * goes through {@code DefaultLockingTaskExecutor}, which marks the task's thread with {@code LockAssert.startLock(name)}
 * right after its lock provider returned the lock and before the task runs, and with {@code LockAssert.endLock()} in
 * its finally block, before it unlocks. The advice on those two reports to the bootstrap bridge
 * ({@code ShedLocks}); the core's hook takes and gives back the agent's lock. Nothing without
 * {@code fencing.shedlock.enabled=true}; switch: fencing.instrumentation.shedlock.enabled.
 */
public final class ShedLockInstrumentationModule implements InstrumentationModule {
  static final String LOCK_ASSERT = "net.javacrumbs.shedlock.core.LockAssert";

  private volatile boolean enabled;

  @Override
  public String name() {
    return "shedlock";
  }

  @Override
  public void install(AgentContext context) {
    enabled = context.config().shedLockEnabled();
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    if (!enabled) {
      return List.of();
    }
    return List.of(new NamedTypeInstrumentation("shedlock", LOCK_ASSERT, t -> {
      t.applyAdvice(method("startLock", 1), StartLockAdvice.class);
      t.applyAdvice(method("endLock", 0), EndLockAdvice.class);
    }));
  }
}
