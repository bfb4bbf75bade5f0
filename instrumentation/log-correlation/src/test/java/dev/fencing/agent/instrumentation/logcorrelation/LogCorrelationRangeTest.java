package dev.fencing.agent.instrumentation.logcorrelation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The hooks against the real jars of the oldest and the latest supported Logback and Log4j 2: Logback's LoggingEvent
 * gets one constructor advised (its advice writes the private field {@code mdcPropertyMap}), Log4j's ThreadContext
 * injectors their injectContextData. A release that renames them fails here, not in production.
 */
class LogCorrelationRangeTest {
  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void logbacksLoggingEventConstructorIsAdvised(String end) throws Exception {
    List<Path> jars = LibraryCheck.versionJars("logback", end);
    assertThat(LibraryCheck.advised(new LogCorrelationInstrumentationModule(), jars))
        .containsExactly(Map.entry(LogbackLoggingEventInstrumentation.LOGGING_EVENT, 1));
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void log4jsContextDataInjectorsAreAdvised(String end) throws Exception {
    List<Path> jars = LibraryCheck.versionJars("log4j", end);
    assertThat(LibraryCheck.advised(new LogCorrelationInstrumentationModule(), jars)).containsOnly(
        Map.entry("org.apache.logging.log4j.core.impl.ThreadContextDataInjector$ForDefaultThreadContextMap", 1),
        Map.entry("org.apache.logging.log4j.core.impl.ThreadContextDataInjector$ForGarbageFreeThreadContextMap", 1),
        Map.entry("org.apache.logging.log4j.core.impl.ThreadContextDataInjector$ForCopyOnWriteThreadContextMap", 1));
  }
}
