package dev.fencing.agent.instrumentation.javahttpclient;

import static net.bytebuddy.matcher.ElementMatchers.isPrivate;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The JDK's HttpClient implementation. Hooking its private 4-argument sendAsync catches send and both sendAsync
 * overloads on Java 17 and 25 (RECIPES.md); hooking HttpRequest.Builder.build would miss requests built before a new
 * token and custom HttpRequest implementations.
 */
final class HttpClientImplInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "jdk/internal/net/http/HttpClientImpl";
  }

  @Override
  public String className() {
    return "jdk.internal.net.http.HttpClientImpl";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("jdk.internal.net.http.HttpClientImpl");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("sendAsync").and(isPrivate()).and(takesArguments(4)), SendAsyncAdvice.class);
  }
}
