package dev.fencing.agent.instrumentation.servlet;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;

/** Inbound tokens in Jakarta Servlet containers. Switch: fencing.instrumentation.servlet.enabled. */
public final class ServletInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "servlet";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new ServletEntryInstrumentation());
  }

  @Override
  public void install(AgentContext context) {
    // Nothing to install: containers load servlet classes in ordinary (unnamed-module) loaders that see the bootstrap
    // part already.
  }
}
