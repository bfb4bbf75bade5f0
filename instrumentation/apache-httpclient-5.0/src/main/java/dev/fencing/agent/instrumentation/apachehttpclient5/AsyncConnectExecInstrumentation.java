package dev.fencing.agent.instrumentation.apachehttpclient5;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The async clients' AsyncConnectExec (HTTP/1.1 and HTTP/2 builders both use it): like the classic ConnectExec, every
 * attempt (redirects, retries, auth rounds) passes it before a connection is leased or opened.
 */
final class AsyncConnectExecInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "org/apache/hc/client5/http/impl/async/AsyncConnectExec";
  }

  @Override
  public String className() {
    return "org.apache.hc.client5.http.impl.async.AsyncConnectExec";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("org.apache.hc.client5.http.impl.async.AsyncConnectExec");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(isPublic().and(named("execute")).and(takesArguments(5)), AsyncConnectExecAdvice.class);
  }
}
