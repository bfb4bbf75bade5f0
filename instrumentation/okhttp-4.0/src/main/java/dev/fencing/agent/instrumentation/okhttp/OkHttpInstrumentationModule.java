package dev.fencing.agent.instrumentation.okhttp;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.http.HttpFencing;
import java.util.List;

/** OkHttp 4.x and 5.x (okhttp3 package). Switch: fencing.instrumentation.okhttp.enabled. */
public final class OkHttpInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "okhttp";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new RealInterceptorChainInstrumentation());
  }

  @Override
  public void install(AgentContext context) {
    HttpFencing.install(context);
  }
}
