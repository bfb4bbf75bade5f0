package dev.fencing.agent.instrumentation;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.log.AgentLog;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** Installs every enabled instrumentation module behind one {@link FencingTransformer}. */
public final class InstrumentationInstaller {
  private static final AgentLog LOG = AgentLog.get(InstrumentationInstaller.class);

  private InstrumentationInstaller() {}

  /**
   * Returns the names of the installed modules. {@code dynamic}: the agent was attached to a running JVM, so classes
   * already loaded are retransformed too.
   */
  public static List<String> install(Instrumentation inst, AgentConfig config, AgentContext context,
      boolean dynamic) {
    List<String> installed = new ArrayList<>();
    FencingTransformer transformer = new FencingTransformer();
    for (InstrumentationModule module : ServiceLoader.load(InstrumentationModule.class,
        InstrumentationInstaller.class.getClassLoader())) {
      if (!config.instrumentationEnabled(module.name())) {
        LOG.info("instrumentation '" + module.name() + "' is disabled by configuration");
        continue;
      }
      module.install(context);
      for (TypeInstrumentation type : module.typeInstrumentations()) {
        transformer.add(type);
      }
      installed.add(module.name());
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
        dev.fencing.agent.threads.AgentThreads.newThread(() -> {
          transformer.warmUp();
          transformer.retransformEarlyBootClasses(inst);
        }, "fencing-agent-retransform").start();
      }
    }
    return installed;
  }
}
