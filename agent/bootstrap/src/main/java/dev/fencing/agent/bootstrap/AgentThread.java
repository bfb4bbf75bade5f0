package dev.fencing.agent.bootstrap;

/**
 * Every thread the agent starts is one of these, so a hook can tell the agent's own traffic (etcd, OTLP export,
 * status endpoint) from the application's with one {@code instanceof}, and never fence it.
 */
public final class AgentThread extends Thread {
  public AgentThread(Runnable task, String name) {
    super(null, task, name);
    setDaemon(true);
  }
}
