package dev.fencing.agent.instrumentation;

import dev.fencing.agent.instrumentation.api.WeakIdentityCache;
import dev.fencing.agent.log.AgentLog;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Whether the classes a loader defines can link against the agent's bootstrap part: the loader must resolve the
 * bootstrap package to the boot loader's classes (the ones the agent core installed its hooks in). Checked once per
 * loader, remembered weakly (a loader that goes away takes its answer along). {@link BootDelegationInstrumentation}
 * makes nearly every loader pass; one that still does not (its class loaded before the agent, or transformed by
 * nobody) gets its classes left unchanged, because inlined advice there would throw NoClassDefFoundError inside the
 * application's own calls. That is a fencing gap, so it is logged once per loader and listed in /status.
 */
public final class BootstrapVisibility {
  private static final AgentLog LOG = AgentLog.get(BootstrapVisibility.class);

  /** At most this many loaders are named in /status; the count goes on. */
  static final int LISTED = 10;

  private static final List<String> UNFENCED = new CopyOnWriteArrayList<>();
  private static final java.util.concurrent.atomic.AtomicInteger UNFENCED_TOTAL =
      new java.util.concurrent.atomic.AtomicInteger();

  private final WeakIdentityCache<ClassLoader, Verdict> verdicts = new WeakIdentityCache<>();
  private final Class<?>[] probes;

  /**
   * {@code probes}: bootstrap classes as the agent core sees them (the boot loader's copies), every one that advice
   * names: a loader delegating only part of the package would fail the others, some already when the verifier loads
   * them with the instrumented class (an exception type thrown by advice).
   */
  BootstrapVisibility(Class<?>... probes) {
    this.probes = probes.clone();
  }

  /** One check per loader, outside any lock: the check calls the loader, which may hold locks of its own. */
  private static final class Verdict {
    final String problem;

    Verdict(String problem) {
      this.problem = problem;
    }
  }

  /** True when classes of {@code loader} may carry advice naming bootstrap classes. */
  boolean sees(ClassLoader loader) {
    if (loader == null) {
      return true;
    }
    Verdict v = verdicts.get(loader);
    if (v == null) {
      Verdict checked = new Verdict(problem(loader, probes));
      v = verdicts.computeIfAbsent(loader, l -> checked);
      if (v == checked && checked.problem != null) {
        String name = describe(loader);
        UNFENCED_TOTAL.incrementAndGet();
        if (UNFENCED.size() < LISTED) {
          UNFENCED.add(name);
        }
        LOG.warn("class loader " + name + " " + checked.problem + ": the JDBC, HTTP and Kafka classes it defines are "
            + "not fenced (their side effects are neither tagged nor blocked). Make it delegate the package "
            + probes[0].getPackageName() + " to the boot loader (JBoss Modules: jboss.modules.system.pkgs; OSGi: "
            + "org.osgi.framework.bootdelegation)");
      }
    }
    return v.problem == null;
  }

  /** Null when {@code loader} resolves each probe's name to that probe; otherwise what it does instead. */
  static String problem(ClassLoader loader, Class<?>... probes) {
    for (Class<?> probe : probes) {
      try {
        Class<?> seen = Class.forName(probe.getName(), false, loader);
        if (seen != probe) {
          return "resolves " + probe.getName() + " to a copy of its own";
        }
      } catch (Throwable t) {
        return "cannot see the agent's bootstrap classes (" + probe.getName() + ": " + t + ")";
      }
    }
    return null;
  }

  static String describe(ClassLoader loader) {
    String name = loader.getName();
    return loader.getClass().getName() + (name == null ? "" : " '" + name + "'") + "@"
        + Integer.toHexString(System.identityHashCode(loader));
  }

  /** Loaders whose classes were left unfenced (the first {@value #LISTED}), for /status. */
  public static List<String> unfencedLoaders() {
    return List.copyOf(UNFENCED);
  }

  public static int unfencedLoaderCount() {
    return UNFENCED_TOTAL.get();
  }
}
