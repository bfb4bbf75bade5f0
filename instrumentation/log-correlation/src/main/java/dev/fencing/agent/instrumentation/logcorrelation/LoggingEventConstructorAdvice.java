package dev.fencing.agent.instrumentation.logcorrelation;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.LogCorrelation;
import java.util.Map;
import net.bytebuddy.asm.Advice;

/**
 * Inlined at the end of Logback's LoggingEvent constructor: when a token is current, the event's MDC property map is
 * the MDC's with the three keys added (a copy: the application's MDC is never written). Nothing else is touched when
 * none is: one call to the bridge. Never fails the log call.
 */
final class LoggingEventConstructorAdvice {
  private LoggingEventConstructorAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  static void exit(@Advice.This Object event,
      @Advice.FieldValue(value = "mdcPropertyMap", readOnly = false) Map<String, String> mdc) {
    Decision d = LogCorrelation.current();
    if (d != null) {
      // getMDCPropertyMap takes the MDC as Logback does; the field then holds the copy with the keys
      mdc = LogCorrelation.withKeys(((ch.qos.logback.classic.spi.LoggingEvent) event).getMDCPropertyMap(), d);
    }
  }
}
