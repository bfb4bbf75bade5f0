package dev.fencing.agent.instrumentation.fencingapi;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;

/**
 * The application's optional API ({@code fencing-api}, package {@code dev.fencing.api}): its {@code Fencing.current()}
 * answers with the agent's state, and methods annotated {@code @Fenced("<lock>")} are sections of their lock. The API
 * is the application's (the agent never bundles it); an application without it loads nothing these instrumentations
 * match. Switch: fencing.instrumentation.fencing-api.enabled.
 */
public final class FencingApiInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "fencing-api";
  }

  @Override
  public void install(AgentContext context) {
    // nothing: the core installs the bridge's hook (FencingApi) for the annotated methods
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new CurrentInstrumentation(), new FencedMethodInstrumentation());
  }
}
