package dev.fencing.agent.bootstrap;

import java.lang.instrument.Instrumentation;

/**
 * How the entry point ({@code FencingAgent}) hands over to the agent's core, which a class loader of its own isolates:
 * the core's starter class offers its {@link Start} here as it initialises, and the entry point, having initialised
 * that class, takes it and calls it. No reflective call: since Java 18 the first reflective call of a method builds
 * method handles for its parameters, some 20 ms of premain on Java 25 for a four-parameter method.
 */
public final class CoreEntry {
  /** Implemented by the core: premain's (or agentmain's) work inside the isolated loader. */
  public interface Start {
    void start(String agentArgs, Instrumentation inst, boolean dynamic, long startNanos);
  }

  private static Start offered;

  private CoreEntry() {}

  /** Called by the core's starter class as it initialises. */
  public static synchronized void offer(Start start) {
    offered = start;
  }

  /** The start the core offered, once; null when none was offered. */
  public static synchronized Start take() {
    Start s = offered;
    offered = null;
    return s;
  }
}
