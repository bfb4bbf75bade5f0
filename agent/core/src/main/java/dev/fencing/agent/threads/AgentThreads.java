package dev.fencing.agent.threads;

import dev.fencing.agent.bootstrap.AgentThread;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Every thread of the agent: daemon, named fencing-agent-*, marked as the agent's own, context loader = the agent's. */
public final class AgentThreads {
  private AgentThreads() {}

  public static Thread newThread(Runnable task, String name) {
    return new AgentThread(task, name, AgentThreads.class.getClassLoader());
  }

  /** A factory for executors; threads are numbered {@code <name>-1}, {@code <name>-2}, ... */
  public static ThreadFactory factory(String name) {
    AtomicInteger n = new AtomicInteger();
    return task -> newThread(task, name + "-" + n.incrementAndGet());
  }
}
