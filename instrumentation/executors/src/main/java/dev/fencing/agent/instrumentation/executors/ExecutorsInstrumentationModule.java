package dev.fencing.agent.instrumentation.executors;

import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.instrumentation.AgentContext;
import dev.fencing.agent.instrumentation.InstrumentationModule;
import dev.fencing.agent.instrumentation.TypeInstrumentation;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Inbound tokens carried into executor tasks. Switch: fencing.instrumentation.executors.enabled. */
public final class ExecutorsInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "executors";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(
        ExecutorInstrumentation.of("java.util.concurrent.ThreadPoolExecutor", "execute"),
        // Its execute and submit go through schedule; periodic schedules are left alone: a request's token must not
        // outlive the request in a job that runs forever.
        ExecutorInstrumentation.of("java.util.concurrent.ScheduledThreadPoolExecutor", "schedule"),
        ExecutorInstrumentation.of("java.util.concurrent.ForkJoinPool", "execute", "submit"),
        // CompletableFuture's async stages run here when the common pool has a parallelism of 1 (2 cores or fewer).
        ExecutorInstrumentation.of("java.util.concurrent.CompletableFuture$ThreadPerTaskExecutor", "execute"),
        ExecutorInstrumentation.of("java.util.concurrent.ThreadPerTaskExecutor", "execute"));
  }

  @Override
  public void install(AgentContext context) {
    // The advice, inlined into java.base, refers to the bootstrap part in the boot loader's unnamed module.
    context.instrumentation().redefineModule(Object.class.getModule(), Set.of(TokenContext.class.getModule()),
        Map.of(), Map.of(), Set.of(), Map.of());
  }
}
