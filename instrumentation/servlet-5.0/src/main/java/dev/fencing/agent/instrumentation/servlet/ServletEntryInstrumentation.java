package dev.fencing.agent.instrumentation.servlet;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Where a container hands a request to the application: {@code FilterChain.doFilter(request, response)} (entered
 * before the first filter) and {@code Servlet.service(request, response)} (for containers that call a servlet
 * without a chain). The marker is the (request, response) method descriptor, so only classes declaring such a method
 * are parsed; Filter.doFilter (three arguments) is not matched: the chain around it already is.
 */
final class ServletEntryInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "(Ljakarta/servlet/ServletRequest;Ljakarta/servlet/ServletResponse;)V";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return not(isInterface())
        .and(hasSuperType(namedOneOf("jakarta.servlet.FilterChain", "jakarta.servlet.Servlet")));
  }

  @Override
  public java.util.Set<String> superTypeNames() {
    return java.util.Set.of("jakarta.servlet.FilterChain", "jakarta.servlet.Servlet");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(namedOneOf("doFilter", "service").and(not(isAbstract())).and(takesArguments(2))
        .and(takesArgument(0, named("jakarta.servlet.ServletRequest"))), ServletEntryAdvice.class);
  }
}
