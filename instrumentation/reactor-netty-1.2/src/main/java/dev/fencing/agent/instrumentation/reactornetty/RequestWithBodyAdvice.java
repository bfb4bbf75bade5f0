package dev.fencing.agent.instrumentation.reactornetty;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.HttpAttempt;
import dev.fencing.agent.bootstrap.ReactorNettyHttp;
import dev.fencing.agent.bootstrap.RequestHeaders;
import java.io.IOException;
import net.bytebuddy.asm.Advice;
import reactor.netty.http.client.HttpClientRequest;

/**
 * HttpClientHandler.requestWithBody(ops), once per attempt, on the event loop. Decides for the attempt's method and
 * target (the handler's {@code method} and {@code toURI}, the target after redirects) under the context the
 * assembling thread carried ({@link ConnectAdvice}); a blocked attempt throws FencingBlockedException, which the
 * caller (a {@code Mono.defer}) turns into the error signal of the attempt: the response Mono or Flux the application
 * subscribed to fails with it (WebClient wraps it in a WebClientRequestException), Reactor Netty does not retry it
 * (it is not a connection reset), and nothing of the request is written. On return, the method has set the
 * request's headers (the client's default headers replace whatever was there), so the pair is set then: each value
 * replacing any the application gave, on the attempt's own request (a redirect's request starts from the defaults
 * again). The URL is read with {@code toString()} and the method with {@code toString()}: their types are Netty's
 * and Reactor Netty's package-private ones, which advice must not name (see {@link ReactorNettyHttp}).
 */
public final class RequestWithBodyAdvice {
  private RequestWithBodyAdvice() {}

  @Advice.OnMethodEnter
  public static Decision enter(@Advice.FieldValue("method") Object method, @Advice.FieldValue("toURI") Object uri,
      @Advice.Argument(0) Object operations) throws IOException {
    try {
      Object carried = ((HttpClientRequest) operations).currentContextView()
          .getOrDefault(ReactorNettyHttp.CONTEXT_KEY, null);
      return ReactorNettyHttp.decide(carried, String.valueOf(method), String.valueOf(uri));
    } catch (Throwable blockedOrAgentError) {
      HttpAttempt.failed(blockedOrAgentError); // rethrows the block; an agent error is counted, the attempt goes on
      return null;
    }
  }

  @Advice.OnMethodExit
  public static void exit(@Advice.Enter Decision decision, @Advice.Argument(0) Object operations) {
    try {
      if (decision != null) {
        RequestHeaders.REACTOR_NETTY.tag(operations, decision);
      }
    } catch (Throwable agentError) {
      HttpAttempt.blocked(agentError); // counted; the attempt goes on untagged
    }
  }
}
