package dev.fencing.agent.instrumentation.jdkhttpserver;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import dev.fencing.agent.bootstrap.HttpHook;
import dev.fencing.agent.bootstrap.TokenContext;
import java.util.List;
import net.bytebuddy.asm.Advice;

/**
 * Makes the exchange's (Fencing-Lock, Fencing-Token), with its Fencing-Signature and Fencing-Grant, current while the
 * chain runs, and restores what was current
 * after. A missing, malformed or duplicated header changes nothing (an HTTP fence in the chain answers those). Only the
 * outermost doFilter of an exchange reads the headers: the server nests three chains per exchange. Inlined into
 * jdk.httpserver: bootstrap and JDK classes only.
 */
public final class DoFilterAdvice {
  private DoFilterAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static Object enter(@Advice.Argument(0) HttpExchange exchange) {
    if (TokenContext.handling(exchange)) {
      return null; // a nested chain of the same exchange: the outermost entry has read its headers
    }
    Headers headers = exchange.getRequestHeaders();
    List<String> tokens = headers.get(HttpHook.TOKEN_HEADER);
    List<String> locks = tokens == null || tokens.size() != 1 ? null : headers.get(HttpHook.LOCK_HEADER);
    if (locks == null || locks.size() != 1) {
      return TokenContext.enterRequest(exchange, null, null, null);
    }
    List<String> grants = headers.get(HttpHook.GRANT_HEADER);
    return TokenContext.enterRequest(exchange, locks.get(0), tokens.get(0),
        headers.getFirst(HttpHook.SIGNATURE_HEADER), grants == null || grants.size() != 1 ? null : grants.get(0));
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Enter Object scope) {
    TokenContext.exitRequest(scope);
  }
}
