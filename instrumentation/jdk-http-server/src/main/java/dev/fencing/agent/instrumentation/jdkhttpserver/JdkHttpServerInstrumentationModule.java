package dev.fencing.agent.instrumentation.jdkhttpserver;

import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Inbound tokens on the JDK's HttpServer. Switch: fencing.instrumentation.jdk-http-server.enabled. */
public final class JdkHttpServerInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "jdk-http-server";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new FilterChainInstrumentation());
  }

  @Override
  public List<String> requiredJdkModules() {
    return List.of("jdk.httpserver");
  }

  @Override
  public void install(AgentContext context) {
    // Advice inlined into jdk.httpserver refers to the bootstrap part (the boot loader's unnamed module).
    Optional<Module> m = ModuleLayer.boot().findModule("jdk.httpserver");
    if (m.isPresent()) { // not ifPresent with a lambda: premain would spin its class
      context.instrumentation().redefineModule(m.get(), Set.of(TokenContext.class.getModule()), Map.of(), Map.of(),
          Set.of(), Map.of());
    }
  }
}
