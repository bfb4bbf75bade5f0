package dev.fencing.agent.startup;

import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.threads.AgentThreads;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Set;

/**
 * Runs the agent's shutdown work after the application's own shutdown hooks have finished.
 *
 * <p>An ordinary shutdown hook runs concurrently with the application's: the agent would give its lease back while
 * an application hook (a Spring context closing, a last batch flushed) still writes, so those writes would be
 * blocked, or go out under a lease a successor already replaced. The JDK runs all application hooks as one step of
 * its shutdown sequence (java.lang.Shutdown, slot 1) and waits for every one of them before the next slot. The agent
 * registers its work in a later slot of that sequence: the lease stays held (and kept alive) for as long as any
 * application hook runs, and is released once none can run any more. Side effects of threads still running after
 * that are blocked from the moment of the release.
 *
 * <p>The slot table is JDK-internal (present from 9 to 25); if it cannot be used, an ordinary shutdown hook does the
 * work instead, beside the application's, and a debug line says so.
 */
final class ShutdownOrder {
  private static final AgentLog LOG = AgentLog.get(ShutdownOrder.class);
  /** Slots 0-2 are the JDK's (console, application hooks, delete-on-exit); the table has 10. */
  private static final int FIRST_FREE_SLOT = 3;
  private static final int LAST_SLOT = 9;

  private ShutdownOrder() {}

  /** Registers {@code task} to run after every application shutdown hook; returns where it went. */
  static String afterApplicationHooks(Instrumentation inst, Runnable task, String name) {
    try {
      if (inst != null) {
        Module base = Object.class.getModule();
        Module agent = ShutdownOrder.class.getModule();
        if (!base.isOpen("java.lang", agent)) {
          inst.redefineModule(base, Set.of(), Map.of(), Map.of("java.lang", Set.of(agent)), Set.of(), Map.of());
        }
        Method add = Class.forName("java.lang.Shutdown").getDeclaredMethod("add", int.class, boolean.class,
            Runnable.class);
        add.setAccessible(true);
        for (int slot = LAST_SLOT; slot >= FIRST_FREE_SLOT; slot--) {
          try {
            add.invoke(null, slot, false, guarded(task));
            return "after the application's shutdown hooks (JDK shutdown slot " + slot + ")";
          } catch (java.lang.reflect.InvocationTargetException taken) {
            if (!(taken.getCause() instanceof IllegalStateException)) {
              throw taken;
            }
            // slot taken (or shutdown already in progress): try the next one
          }
        }
      }
    } catch (Throwable t) {
      LOG.debug("cannot order the shutdown after the application's hooks (" + AgentLog.describe(t)
          + "); using an ordinary shutdown hook");
    }
    Runtime.getRuntime().addShutdownHook(AgentThreads.newThread(task, name));
    return "in a shutdown hook beside the application's";
  }

  /** The JDK runs the slot on the exiting thread: nothing the agent does may escape it. */
  private static Runnable guarded(Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (Throwable t) {
        LOG.warn("shutdown: " + AgentLog.describe(t));
      }
    };
  }
}
