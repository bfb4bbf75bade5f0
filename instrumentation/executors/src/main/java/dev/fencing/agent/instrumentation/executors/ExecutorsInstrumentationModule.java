package dev.fencing.agent.instrumentation.executors;

import static net.bytebuddy.matcher.ElementMatchers.isBridge;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.isStatic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Inbound tokens and lock scopes carried into executor tasks and CompletableFuture stages. Switch:
 * fencing.instrumentation.executors.enabled.
 */
public final class ExecutorsInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "executors";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(
        // Each task of a pool starts with nothing current (beforeExecute: a subclass that overrides it without
        // calling super keeps what an earlier task left).
        NamedTypeInstrumentation.bootClass("JDK", "java.util.concurrent.ThreadPoolExecutor", new PoolMethods()),
        // Its execute and submit go through schedule; periodic schedules carry a lock scope only: a request's token
        // must not outlive the request in a job that runs forever.
        NamedTypeInstrumentation.bootClass("JDK", "java.util.concurrent.ScheduledThreadPoolExecutor",
            new ScheduledPoolMethods()),
        executor("java.util.concurrent.ForkJoinPool", "execute", "submit"),
        // CompletableFuture's async stages run here when the common pool has a parallelism of 1 (2 cores or fewer).
        executor("java.util.concurrent.CompletableFuture$ThreadPerTaskExecutor", "execute"),
        executor("java.util.concurrent.ThreadPerTaskExecutor", "execute"),
        completableFuture());
  }

  /**
   * CompletableFuture's dependent stages that run on the thread completing the future (a library's I/O or callback
   * thread, a scheduler) when it completes later: the function runs in the inbound token or lock scope of the thread
   * that registered it, as a task handed to an executor does; the two-stage forms ({@code thenCombine},
   * {@code applyToEither}, ...) too. Their async variants go through the executors above.
   * Bridge methods are left out: they call the method itself.
   */
  private static TypeInstrumentation completableFuture() {
    return NamedTypeInstrumentation.bootClass("JDK", "java.util.concurrent.CompletableFuture", new StageMethods());
  }

  // The advice of each class, applied when the class loads; classes of their own rather than lambdas, which premain
  // would spin (one class each, on every start).

  /** ThreadPoolExecutor: each task of a pool starts with nothing current. */
  private static final class PoolMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      wrapTasks(t, "execute");
      t.applyAdvice(named("beforeExecute").and(takesArguments(Thread.class, Runnable.class)), TaskStartAdvice.class);
    }
  }

  /** ScheduledThreadPoolExecutor: tasks go through schedule; periodic ones carry a lock scope only. */
  private static final class ScheduledPoolMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      wrapTasks(t, "schedule");
      t.applyAdvice(isPublic().and(namedOneOf("scheduleAtFixedRate", "scheduleWithFixedDelay"))
          .and(takesArgument(0, Runnable.class)), WrapPeriodicAdvice.class);
    }
  }

  /** CompletableFuture's dependent stages. */
  private static final class StageMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(stage("thenApply", "thenCompose", "exceptionally", "exceptionallyCompose")
          .and(takesArgument(0, Function.class)), WrapFunctionAdvice.class);
      t.applyAdvice(stage("thenAccept").and(takesArgument(0, Consumer.class)), WrapConsumerAdvice.class);
      t.applyAdvice(stage("thenRun").and(takesArgument(0, Runnable.class)), WrapRunnableAdvice.class);
      t.applyAdvice(stage("handle").and(takesArgument(0, BiFunction.class)), WrapBiFunctionAdvice.class);
      t.applyAdvice(stage("whenComplete").and(takesArgument(0, BiConsumer.class)), WrapBiConsumerAdvice.class);
      t.applyAdvice(isPublic().and(not(isStatic())).and(not(isBridge())).and(namedOneOf("thenCombine",
          "thenAcceptBoth", "runAfterBoth", "applyToEither", "acceptEither", "runAfterEither")).and(takesArguments(2)),
          WrapStageFunctionAdvice.class);
    }
  }

  /** The task-taking methods {@code methods} of an executor. */
  private static final class TaskMethods implements Consumer<TypeInstrumentation.Transformer> {
    private final String[] methods;

    TaskMethods(String... methods) {
      this.methods = methods;
    }

    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      wrapTasks(t, methods);
    }
  }

  private static ElementMatcher.Junction<MethodDescription> stage(String... names) {
    return isPublic().and(not(isStatic())).and(not(isBridge())).and(namedOneOf(names)).and(takesArguments(1));
  }

  /**
   * One JDK executor class by name: the public methods called {@code methods} that accept a task as a
   * {@link Runnable} or {@link Callable} get the task wrapped. Only JDK classes: application executors nearly always
   * delegate to one of them, and matching every Executor implementation would parse half the class path.
   * ForkJoinTask arguments are left alone (they are not wrappable without changing their type).
   */
  private static TypeInstrumentation executor(String className, String... methods) {
    return NamedTypeInstrumentation.bootClass("JDK", className, new TaskMethods(methods));
  }

  private static void wrapTasks(TypeInstrumentation.Transformer t, String... methods) {
    t.applyAdvice(isPublic().and(namedOneOf(methods)).and(takesArgument(0, Runnable.class)), WrapRunnableAdvice.class);
    t.applyAdvice(isPublic().and(namedOneOf(methods)).and(takesArgument(0, Callable.class)), WrapCallableAdvice.class);
  }

  @Override
  public void install(AgentContext context) {
    // The advice, inlined into java.base, refers to the bootstrap part in the boot loader's unnamed module.
    context.instrumentation().redefineModule(Object.class.getModule(), Set.of(TokenContext.class.getModule()),
        Map.of(), Map.of(), Set.of(), Map.of());
  }
}
