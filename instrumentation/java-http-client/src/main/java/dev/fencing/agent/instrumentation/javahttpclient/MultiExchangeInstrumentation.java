package dev.fencing.agent.instrumentation.javahttpclient;

import static net.bytebuddy.matcher.ElementMatchers.isPrivate;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The JDK HttpClient's exchange of one send: its private responseAsyncImpl() starts each attempt (the first, then every
 * followed redirect, retry and authentication round, on the request the client built for it), on Java 17 and 25.
 */
final class MultiExchangeInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "jdk/internal/net/http/MultiExchange";
  }

  @Override
  public String className() {
    return "jdk.internal.net.http.MultiExchange";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("jdk.internal.net.http.MultiExchange");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("responseAsyncImpl").and(isPrivate()).and(takesArguments(0)), AttemptAdvice.class);
  }
}
