package dev.fencing.agent.instrumentation.logcorrelation;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;

/**
 * Log correlation for Logback and Log4j 2: one switch for both, fencing.instrumentation.log-correlation.enabled, since
 * an application that wants its logs without the keys wants that whatever it logs with. Nothing to install: the advice
 * asks the bridge ({@code LogCorrelation}) what is current.
 */
public final class LogCorrelationInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "log-correlation";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new LogbackLoggingEventInstrumentation(), new Log4jContextDataInjectorInstrumentation());
  }

  @Override
  public void install(AgentContext context) {}
}
