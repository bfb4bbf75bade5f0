package dev.fencing.agent.instrumentation.apachehttpclient5;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The classic client's ConnectExec: the chain element that acquires and opens the connection. Every attempt passes
 * it (RedirectExec, HttpRequestRetryExec and ProtocolExec's auth loop sit above it and call down again), after the
 * request interceptors ran and before any connection is opened.
 */
final class ConnectExecInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "org/apache/hc/client5/http/impl/classic/ConnectExec";
  }

  @Override
  public String className() {
    return "org.apache.hc.client5.http.impl.classic.ConnectExec";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("org.apache.hc.client5.http.impl.classic.ConnectExec");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(isPublic().and(named("execute")).and(takesArguments(3)), ConnectExecAdvice.class);
  }
}
