package dev.fencing.agent.instrumentation.servlet;

import dev.fencing.agent.bootstrap.HttpHook;
import dev.fencing.agent.bootstrap.TokenContext;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Enumeration;
import net.bytebuddy.asm.Advice;

/**
 * Makes the request's (Fencing-Lock, Fencing-Token), with its Fencing-Signature and Fencing-Grant, current while the container's chain or servlet runs, and restores
 * what was current after (nested chains and forwards see the same pair and change nothing). A missing, malformed or
 * duplicated header changes nothing: an HTTP fence in the chain answers those. Work the application hands to
 * executors carries the pair through the executors instrumentation. The argument is typed Object: the servlet API is
 * not visible to the agent's loader, where ByteBuddy reads the advice, only to the container's.
 */
public final class ServletEntryAdvice {
  private ServletEntryAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static Object enter(@Advice.Argument(0) Object request) {
    if (!(request instanceof HttpServletRequest)) {
      return null;
    }
    HttpServletRequest http = (HttpServletRequest) request;
    Enumeration<String> tokens = http.getHeaders(HttpHook.TOKEN_HEADER);
    if (tokens == null || !tokens.hasMoreElements()) {
      return null;
    }
    String token = tokens.nextElement();
    if (tokens.hasMoreElements()) {
      return null;
    }
    Enumeration<String> grants = http.getHeaders(HttpHook.GRANT_HEADER);
    String grant = null;
    if (grants != null && grants.hasMoreElements()) {
      grant = grants.nextElement();
      if (grants.hasMoreElements()) {
        grant = null; // two grants: none carried on (the downstream fence would refuse the pair as malformed)
      }
    }
    return TokenContext.enter(http.getHeader(HttpHook.LOCK_HEADER), token, http.getHeader(HttpHook.SIGNATURE_HEADER),
        grant);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Enter Object scope) {
    TokenContext.exit(scope);
  }
}
