package dev.fencing.agent.instrumentation;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.JdkModules;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.log.AgentLog;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.List;
import java.util.Iterator;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/** Installs every enabled instrumentation module behind one {@link FencingTransformer}. */
public final class InstrumentationInstaller {
  private static final AgentLog LOG = AgentLog.get(InstrumentationInstaller.class);

  /** A bound on load errors, so a provider list that keeps failing can never hold premain in a loop. */
  private static final int MAX_LOAD_FAILURES = 64;

  private InstrumentationInstaller() {}

  /**
   * Returns the names of the installed modules. {@code dynamic}: the agent was attached to a running JVM, so classes
   * already loaded are retransformed too.
   */
  public static List<String> install(Instrumentation inst, AgentConfig config, AgentContext context,
      boolean dynamic) {
    List<String> installed = new ArrayList<>();
    FencingTransformer transformer = new FencingTransformer();
    Iterator<InstrumentationModule> modules = ServiceLoader.load(InstrumentationModule.class,
        InstrumentationInstaller.class.getClassLoader()).iterator();
    for (int failures = 0; failures < MAX_LOAD_FAILURES; ) {
      InstrumentationModule module;
      try {
        if (!modules.hasNext()) {
          break;
        }
        module = modules.next();
      } catch (ServiceConfigurationError | LinkageError e) {
        // One module that cannot even load must not cost the others: the iterator goes on with the next one.
        LOG.warn("an instrumentation module could not be loaded; its library is not fenced", e);
        failures++;
        continue;
      }
      List<TypeInstrumentation> types = installOne(module, config, context);
      if (types != null) {
        for (TypeInstrumentation type : types) {
          transformer.add(type);
        }
        installed.add(module.name());
      }
    }
    if (!transformer.isEmpty()) {
      // Before any application class loader is defined, so each one's loadClass already sees the bootstrap part.
      if (config.instrumentationEnabled(BootDelegationInstrumentation.NAME)) {
        transformer.add(new BootDelegationInstrumentation());
      } else {
        LOG.info("instrumentation '" + BootDelegationInstrumentation.NAME + "' is disabled by configuration: class "
            + "loaders that do not delegate the agent's bootstrap package keep their classes unfenced");
      }
      inst.addTransformer(transformer, true);
      if (dynamic) {
        transformer.retransformLoaded(inst);
        transformer.retransformEarlyBootClasses(inst);
      } else {
        // Off premain: a handful of JDK classes at most, but retransforming loads ByteBuddy; the warm-up first, so
        // the application's first instrumented class finds ByteBuddy initialised.
        dev.fencing.agent.threads.AgentThreads.newThread(new WarmUp(transformer, inst), "fencing-agent-retransform")
            .start();
      }
    }
    return installed;
  }

  /** ByteBuddy's warm-up, then the early boot classes; a class rather than a lambda, which premain would spin. */
  private static final class WarmUp implements Runnable {
    private final FencingTransformer transformer;
    private final Instrumentation inst;

    WarmUp(FencingTransformer transformer, Instrumentation inst) {
      this.transformer = transformer;
      this.inst = inst;
    }

    @Override
    public void run() {
      transformer.warmUp();
      transformer.retransformEarlyBootClasses(inst);
    }
  }

  /**
   * The module's type instrumentations once its hook is installed, or null when it is off: disabled by
   * configuration, a JDK module it needs is missing from this runtime, or it failed to install (each module on its
   * own, so the other channels stay fenced).
   */
  private static List<TypeInstrumentation> installOne(InstrumentationModule module, AgentConfig config,
      AgentContext context) {
    String name = module.name();
    if (!config.instrumentationEnabled(name)) {
      LOG.info("instrumentation '" + name + "' is disabled by configuration");
      return null;
    }
    List<String> missing = JdkModules.missing(module.requiredJdkModules());
    if (!missing.isEmpty()) {
      // Nothing of that library can run here (a jlink image or --limit-modules without it): nothing to fence.
      LOG.info("instrumentation '" + name + "' is off: this Java runtime has no " + String.join(", ", missing)
          + " module");
      return null;
    }
    try {
      module.install(context);
      return List.copyOf(module.typeInstrumentations());
    } catch (Throwable t) {
      LOG.error("could not install instrumentation '" + name + "'; its library is not fenced (the others are)", t);
      return null;
    }
  }
}
