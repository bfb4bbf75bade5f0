package dev.fencing.agent.instrumentation.executors;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;

import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.instrumentation.AgentContext;
import dev.fencing.agent.instrumentation.InstrumentationModule;
import dev.fencing.agent.instrumentation.NamedTypeInstrumentation;
import dev.fencing.agent.instrumentation.TypeInstrumentation;
import java.util.List;
import java.util.concurrent.Callable;
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
        executor("java.util.concurrent.ThreadPoolExecutor", "execute"),
        // Its execute and submit go through schedule; periodic schedules are left alone: a request's token must not
        // outlive the request in a job that runs forever.
        executor("java.util.concurrent.ScheduledThreadPoolExecutor", "schedule"),
        executor("java.util.concurrent.ForkJoinPool", "execute", "submit"),
        // CompletableFuture's async stages run here when the common pool has a parallelism of 1 (2 cores or fewer).
        executor("java.util.concurrent.CompletableFuture$ThreadPerTaskExecutor", "execute"),
        executor("java.util.concurrent.ThreadPerTaskExecutor", "execute"));
  }

  /**
   * One JDK executor class by name: the public methods called {@code methods} that accept a task as a
   * {@link Runnable} or {@link Callable} get the task wrapped. Only JDK classes: application executors nearly always
   * delegate to one of them, and matching every Executor implementation would parse half the class path.
   * ForkJoinTask arguments are left alone (they are not wrappable without changing their type).
   */
  private static TypeInstrumentation executor(String className, String... methods) {
    return NamedTypeInstrumentation.bootClass("JDK", className, t -> {
      t.applyAdvice(isPublic().and(namedOneOf(methods)).and(takesArgument(0, Runnable.class)), WrapRunnableAdvice.class);
      t.applyAdvice(isPublic().and(namedOneOf(methods)).and(takesArgument(0, Callable.class)), WrapCallableAdvice.class);
    });
  }

  @Override
  public void install(AgentContext context) {
    // The advice, inlined into java.base, refers to the bootstrap part in the boot loader's unnamed module.
    context.instrumentation().redefineModule(Object.class.getModule(), Set.of(TokenContext.class.getModule()),
        Map.of(), Map.of(), Set.of(), Map.of());
  }
}
