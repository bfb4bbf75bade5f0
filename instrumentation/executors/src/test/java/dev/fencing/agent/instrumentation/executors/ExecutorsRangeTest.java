package dev.fencing.agent.instrumentation.executors;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The task hand-off hooks against java.base of Java 17 and Java 25: each executor class the module names is found,
 * with the number of Runnable/Callable-taking methods it wraps, and the advice weaves into it. A JDK that adds, drops
 * or reshapes one of them (as Java 21 added ThreadPerTaskExecutor) fails here, and the module is updated with it.
 */
class ExecutorsRangeTest {
  @ParameterizedTest
  @ValueSource(strings = {"17", "25"})
  void theHooksSelectTheirJdkClassesAndTheirAdviceWeaves(String java) throws Exception {
    Map<String, Integer> advised =
        LibraryCheck.advisedInJdk(new ExecutorsInstrumentationModule(), LibraryCheck.testedJdk(java), "java.base");
    Map<String, Integer> expected = new TreeMap<>(Map.of(
        "java.util.concurrent.ThreadPoolExecutor", 2, // execute(Runnable), beforeExecute(Thread, Runnable)
        // schedule(Runnable, ...), schedule(Callable, ...), scheduleAtFixedRate, scheduleWithFixedDelay
        "java.util.concurrent.ScheduledThreadPoolExecutor", 4,
        // execute(Runnable), submit(Runnable), submit(Runnable, T), submit(Callable), and the bridge methods javac
        // adds for the three submits (they return ForkJoinTask): a call through ExecutorService enters the bridge and
        // then the method, and the task is wrapped once (TokenContext.wrap leaves a wrapped task as it is)
        "java.util.concurrent.ForkJoinPool", 7,
        // thenApply, thenCompose, exceptionally, exceptionallyCompose, thenAccept, thenRun, handle, whenComplete;
        // thenCombine, thenAcceptBoth, runAfterBoth, applyToEither, acceptEither, runAfterEither
        "java.util.concurrent.CompletableFuture", 14));
    if (java.equals("17")) {
      // where CompletableFuture's async stages run when the common pool has a parallelism of 1; Java 25's
      // CompletableFuture has no such executor and always hands them to a ForkJoinPool
      expected.put("java.util.concurrent.CompletableFuture$ThreadPerTaskExecutor", 1);
    } else {
      expected.put("java.util.concurrent.ThreadPerTaskExecutor", 1); // virtual-thread executors, Java 21+
    }
    assertThat(advised).isEqualTo(expected);
  }
}
