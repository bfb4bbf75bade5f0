package dev.fencing.agent.instrumentation.httpurlconnection;

import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.http.HttpFencing;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** java.net.HttpURLConnection (the JDK's http/https handler). Switch: fencing.instrumentation.http-url-connection.enabled. */
public final class HttpUrlConnectionInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "http-url-connection";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new WriteRequestsInstrumentation(), new ResponseCodeInstrumentation());
  }

  @Override
  public void install(AgentContext context) {
    HttpFencing.install(context);
    // The advice, inlined into java.base, refers to the bootstrap part in the boot loader's unnamed module.
    context.instrumentation().redefineModule(Object.class.getModule(), Set.of(Fencing.class.getModule()),
        Map.of(), Map.of(), Set.of(), Map.of());
  }
}
