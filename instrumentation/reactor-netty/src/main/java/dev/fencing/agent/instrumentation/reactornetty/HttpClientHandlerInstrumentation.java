package dev.fencing.agent.instrumentation.reactornetty;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * {@code HttpClientConnect$HttpClientHandler.requestWithBody(HttpClientOperations)}: called once per attempt (the
 * first, each redirect, each retry of a request whose pooled connection was reset) when the attempt's connection is
 * ready, on its event loop, before the application's send function runs and before anything of the request is
 * written. The same method in 1.0 through 1.3.
 */
final class HttpClientHandlerInstrumentation implements TypeInstrumentation {
  static final String NAME = "reactor.netty.http.client.HttpClientConnect$HttpClientHandler";

  @Override
  public String classFileMarker() {
    return "reactor/netty/http/client/HttpClientConnect$HttpClientHandler";
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
    t.applyAdvice(named("requestWithBody").and(takesArguments(1)), RequestWithBodyAdvice.class);
  }
}
