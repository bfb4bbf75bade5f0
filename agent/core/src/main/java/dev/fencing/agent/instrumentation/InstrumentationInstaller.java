package dev.fencing.agent.instrumentation;

import dev.fencing.agent.log.AgentLog;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.dynamic.scaffold.TypeValidation;
import net.bytebuddy.matcher.ElementMatchers;
import net.bytebuddy.utility.JavaModule;

/** Installs every enabled instrumentation module with one ByteBuddy AgentBuilder. */
public final class InstrumentationInstaller {
  private static final AgentLog LOG = AgentLog.get(InstrumentationInstaller.class);

  private InstrumentationInstaller() {}

  /** Returns the names of the installed modules. */
  public static List<String> install(Instrumentation inst, AgentContext context) {
    List<String> installed = new ArrayList<>();
    ClassLoader agentLoader = InstrumentationInstaller.class.getClassLoader();
    ClassFileLocator adviceLocator = ClassFileLocator.ForClassLoader.of(agentLoader);
    AgentBuilder builder = new AgentBuilder.Default(new ByteBuddy().with(TypeValidation.DISABLED))
        .disableClassFormatChanges()
        .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
        .with(AgentBuilder.InitializationStrategy.NoOp.INSTANCE)
        .with(AgentBuilder.TypeStrategy.Default.REDEFINE)
        .with(new FailureLogger())
        // JDK classes are left alone until an instrumentation needs one (the JDK HttpClient will); never the agent's
        // own classes (relocated libraries included) nor ByteBuddy's.
        .ignore(ElementMatchers.any(), ElementMatchers.isBootstrapClassLoader())
        .or(ElementMatchers.nameStartsWith("dev.fencing.agent.").or(ElementMatchers.nameStartsWith("net.bytebuddy."))
            .or(ElementMatchers.isSynthetic()));
    boolean any = false;
    for (InstrumentationModule module : ServiceLoader.load(InstrumentationModule.class, agentLoader)) {
      if (!context.config().instrumentationEnabled(module.name())) {
        LOG.info("instrumentation '" + module.name() + "' is disabled by configuration");
        continue;
      }
      module.install(context);
      for (TypeInstrumentation type : module.typeInstrumentations()) {
        List<AgentBuilder.Transformer> transformers = new ArrayList<>();
        type.transform((methods, advice) -> transformers.add((b, td, loader, javaModule, domain) ->
            b.visit(Advice.to(advice, adviceLocator).on(methods))));
        AgentBuilder.Identified.Extendable extendable = builder.type(type.typeMatcher()).transform(transformers.get(0));
        for (int i = 1; i < transformers.size(); i++) {
          extendable = extendable.transform(transformers.get(i));
        }
        builder = extendable;
        any = true;
      }
      installed.add(module.name());
    }
    if (any) {
      builder.installOn(inst);
    }
    return installed;
  }

  /** Transformation errors are the agent's problem, never the application's: log them and go on. */
  private static final class FailureLogger extends AgentBuilder.Listener.Adapter {
    @Override
    public void onError(String typeName, ClassLoader classLoader, JavaModule module, boolean loaded, Throwable throwable) {
      LOG.warn("could not instrument " + typeName, throwable);
    }

    @Override
    public void onTransformation(TypeDescription type, ClassLoader loader, JavaModule module, boolean loaded,
        DynamicType dynamicType) {
      if (LOG.debugEnabled()) {
        LOG.debug("instrumented " + type.getName());
      }
    }
  }
}
