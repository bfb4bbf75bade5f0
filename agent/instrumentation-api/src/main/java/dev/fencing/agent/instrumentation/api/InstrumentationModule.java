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

  /**
   * The JDK modules the library needs (e.g. {@code java.sql} for JDBC). A runtime built without one of them (a jlink
   * image, {@code --limit-modules}) cannot run the library at all, so the module is left out and the others install.
   */
  default List<String> requiredJdkModules() {
    return List.of();
  }
}
