package dev.fencing.agent.instrumentation.reactornetty;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * {@code reactor.netty.http.client.HttpClientConnect.connect()}: every response method of the client
 * ({@code response}, {@code responseSingle}, {@code responseContent}, {@code responseConnection}, websockets) builds
 * its Mono from it, on the thread that assembles the request (for WebClient, the thread that subscribes to the
 * exchange). The one place that thread is known before the attempts move to an event loop.
 */
final class HttpClientConnectInstrumentation implements TypeInstrumentation {
  static final String NAME = "reactor.netty.http.client.HttpClientConnect";

  @Override
  public String classFileMarker() {
    return "reactor/netty/http/client/HttpClientConnect";
  }

  @Override
  public String className() {
    return NAME;
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named(NAME);
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("connect").and(takesArguments(0)).and(returns(named("reactor.core.publisher.Mono"))),
        ConnectAdvice.class);
  }
}
