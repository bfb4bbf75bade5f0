package dev.fencing.agent.bootstrap;

/**
 * Every thread the agent starts is one of these, so a hook can tell the agent's own traffic (etcd, OTLP export,
 * status endpoint) from the application's with one {@code instanceof}, and never fence it.
 */
public final class AgentThread extends Thread {
  /**
   * @param contextLoader the agent's own class loader: libraries that look things up through the context class loader
   *     (ServiceLoader, resources) must find the agent's relocated copies, whichever thread started the agent (an
   *     attach listener thread has none at all).
   */
  public AgentThread(Runnable task, String name, ClassLoader contextLoader) {
    super(null, task, name);
    setDaemon(true);
    setContextClassLoader(contextLoader);
  }
}
