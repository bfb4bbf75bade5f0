package dev.fencing.agent.instrumentation.reactornetty;

import dev.fencing.agent.bootstrap.ReactorNettyHttp;
import net.bytebuddy.asm.Advice;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.http.client.HttpClientState;

/**
 * HttpIOHandlerObserver.onStateChange(connection, state): on RESPONSE_RECEIVED the connection is the attempt's
 * response, whose 409 with Fencing-Rejected is reported ({@link ReactorNettyHttp#responded}, which reads Netty's status
 * and headers). Before the observer hands the response on, so the count is there when the application sees it.
 */
public final class ResponseReceivedAdvice {
  private ResponseReceivedAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(0) Object connection, @Advice.Argument(1) Object state) {
    if (state == HttpClientState.RESPONSE_RECEIVED && connection instanceof HttpClientResponse) {
      ReactorNettyHttp.responded(connection);
    }
  }
}
