package dev.fencing.agent.instrumentation.jdkhttpserver;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import dev.fencing.agent.bootstrap.HttpHook;
import dev.fencing.agent.bootstrap.TokenContext;
import java.util.List;
import net.bytebuddy.asm.Advice;

/**
 * Makes the exchange's (Fencing-Lock, Fencing-Token) current while the chain runs, and restores what was current
 * after. A missing, malformed or duplicated header changes nothing (an HTTP fence in the chain answers those). Inlined
 * into jdk.httpserver: bootstrap and JDK classes only.
 */
public final class DoFilterAdvice {
  private DoFilterAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static Object enter(@Advice.Argument(0) HttpExchange exchange) {
    Headers headers = exchange.getRequestHeaders();
    List<String> tokens = headers.get(HttpHook.TOKEN_HEADER);
    if (tokens == null || tokens.size() != 1) {
      return null;
    }
    List<String> locks = headers.get(HttpHook.LOCK_HEADER);
    return locks == null || locks.size() != 1 ? null
        : TokenContext.enter(locks.get(0), tokens.get(0), headers.getFirst(HttpHook.SIGNATURE_HEADER));
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Enter Object scope) {
    TokenContext.exit(scope);
  }
}
