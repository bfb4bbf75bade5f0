package dev.fencing.agent.instrumentation.javahttpclient;

import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.http.HttpFencing;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** java.net.http.HttpClient. Switch: fencing.instrumentation.java-http-client.enabled. */
public final class JavaHttpClientInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "java-http-client";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new HttpClientImplInstrumentation(), new MultiExchangeInstrumentation());
  }

  @Override
  public List<String> requiredJdkModules() {
    return List.of("java.net.http");
  }

  @Override
  public void install(AgentContext context) {
    HttpFencing.install(context);
    // Advice inlined into java.net.http refers to the bootstrap part, which lives in the boot loader's unnamed
    // module: a named module must be told to read it.
    // (Looked up by name: loading HttpClient itself in premain is not needed, and a jlinked runtime may lack it.)
    Optional<Module> m = ModuleLayer.boot().findModule("java.net.http");
    if (m.isPresent()) { // not ifPresent with a lambda: premain would spin its class
      context.instrumentation().redefineModule(m.get(), Set.of(Fencing.class.getModule()), Map.of(), Map.of(),
          Set.of(), Map.of());
    }
  }
}
