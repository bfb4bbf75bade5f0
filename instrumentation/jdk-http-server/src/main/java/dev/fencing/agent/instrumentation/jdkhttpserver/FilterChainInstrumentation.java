package dev.fencing.agent.instrumentation.jdkhttpserver;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * {@code com.sun.net.httpserver.Filter.Chain}: the server runs every exchange through a chain (user filters, then
 * the handler), so its doFilter is entered before any filter or handler sees the request, whatever the handler
 * class. Handler implementations are not matched: they are the application's, and unbounded in number.
 */
final class FilterChainInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "com/sun/net/httpserver/Filter$Chain";
  }

  @Override
  public String className() {
    return "com.sun.net.httpserver.Filter$Chain";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("com.sun.net.httpserver.Filter$Chain");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("doFilter").and(takesArguments(1)), DoFilterAdvice.class);
  }
}
