package dev.fencing.agent.instrumentation.reactornetty;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * {@code HttpClientConnect$HttpIOHandlerObserver.onStateChange(Connection, State)}: the observer of each attempt's
 * connection that completes the attempt with its response ({@code HttpClientState.RESPONSE_RECEIVED}), once per
 * response.
 */
final class ResponseObserverInstrumentation implements TypeInstrumentation {
  static final String NAME = "reactor.netty.http.client.HttpClientConnect$HttpIOHandlerObserver";

  @Override
  public String classFileMarker() {
    return "reactor/netty/http/client/HttpClientConnect$HttpIOHandlerObserver";
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
    t.applyAdvice(named("onStateChange").and(takesArguments(2)), ResponseReceivedAdvice.class);
  }
}
