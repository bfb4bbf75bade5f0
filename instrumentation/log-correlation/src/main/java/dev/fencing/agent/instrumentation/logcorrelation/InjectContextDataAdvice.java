package dev.fencing.agent.instrumentation.logcorrelation;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.LogCorrelation;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * Inlined at the end of Log4j 2's ContextDataInjector.injectContextData: when a token is current, the event's context
 * data gets the three keys. The map the injector returns is written only when it is the event's own reusable map
 * (garbage-free logging); otherwise (a frozen snapshot, possibly the ThreadContext's own) the event gets a copy with
 * the keys, frozen as the original was. Nothing else happens when no token is current: one call to the bridge.
 */
final class InjectContextDataAdvice {
  private InjectContextDataAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  static void exit(@Advice.Argument(1) Object reusable,
      @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object data) {
    Decision d = LogCorrelation.current();
    if (d != null) {
      org.apache.logging.log4j.util.StringMap in = (org.apache.logging.log4j.util.StringMap) data;
      org.apache.logging.log4j.util.StringMap out = in;
      if (in == null || in != reusable || in.isFrozen()) {
        out = org.apache.logging.log4j.core.impl.ContextDataFactory.createContextData((in == null ? 0 : in.size()) + 3);
        if (in != null) {
          out.putAll(in);
        }
      }
      out.putValue(LogCorrelation.LOCK_KEY, d.lock());
      out.putValue(LogCorrelation.TOKEN_KEY, d.tokenText());
      if (d.grant() != null) {
        out.putValue(LogCorrelation.GRANT_KEY, d.grant());
      }
      if (out != in && (in == null || in.isFrozen())) {
        out.freeze();
      }
      data = out;
    }
  }
}
