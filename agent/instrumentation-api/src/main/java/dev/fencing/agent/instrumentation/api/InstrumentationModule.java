package dev.fencing.agent.instrumentation.api;

import java.util.List;

/**
 * One instrumented library family (jdbc, java-http-client, ...), found with ServiceLoader in the agent's loader and
 * switched by {@code fencing.instrumentation.<name>.enabled}.
 */
public interface InstrumentationModule {
  /** The name in {@code fencing.instrumentation.<name>.enabled}. */
  String name();

  List<TypeInstrumentation> typeInstrumentations();

  /** Called once in premain when enabled, before any class is transformed: install the hook its advice calls. */
  void install(AgentContext context);
}
