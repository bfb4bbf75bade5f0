package dev.fencing.agent.instrumentation.logcorrelation;

import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Logback's LoggingEvent, made by its constructor on the logging thread for every call that passes the level check
 * (plain and fluent SLF4J calls alike). The constructor's end is where the event's MDC map is taken, with the keys
 * added when a token is current; Logback itself would take the MDC later, on the first read, which is on the same
 * thread for every appender (an AsyncAppender reads it before it queues the event).
 */
final class LogbackLoggingEventInstrumentation implements TypeInstrumentation {
  static final String LOGGING_EVENT = "ch.qos.logback.classic.spi.LoggingEvent";

  @Override
  public String classFileMarker() {
    return "ch/qos/logback/classic/spi/LoggingEvent";
  }

  @Override
  public String className() {
    return LOGGING_EVENT;
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named(LOGGING_EVENT);
  }

  @Override
  public void transform(Transformer t) {
    // (fqcn, logger, level, message, throwable, arguments): the no-argument one is for deserialisation and tests
    t.applyAdvice(isConstructor().and(takesArguments(6)).and(takesArgument(1, named("ch.qos.logback.classic.Logger"))),
        LoggingEventConstructorAdvice.class);
  }
}
