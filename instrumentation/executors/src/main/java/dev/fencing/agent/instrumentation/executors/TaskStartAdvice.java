package dev.fencing.agent.instrumentation.executors;

import dev.fencing.agent.bootstrap.TokenContext;
import net.bytebuddy.asm.Advice;

/**
 * ThreadPoolExecutor.beforeExecute, on the worker thread before each task: the task starts with nothing current.
 * A lock scope a task entered and did not leave (an application lock it acquired and another thread released, a
 * lease that ended) belongs to that task, not to the pooled thread's next one; a task handed off with a context
 * installs its own inside {@code run}.
 */
public final class TaskStartAdvice {
  private TaskStartAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter() {
    TokenContext.taskStarting();
  }
}
