package dev.fencing.agent.instrumentation.apachehttpclient4;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The exec chain's last element: MainClientExec (HttpClientBuilder's clients) or MinimalClientExec
 * (HttpClients.createMinimal), which lease and open the connection and send the request. Every attempt passes it
 * (RedirectExec, ServiceUnavailableRetryExec, RetryExec and ProtocolExec sit above it and call down again), after the
 * request interceptors ran and before a connection is leased.
 */
final class ClientExecInstrumentation implements TypeInstrumentation {
  static final String MAIN = "org.apache.http.impl.execchain.MainClientExec";
  static final String MINIMAL = "org.apache.http.impl.execchain.MinimalClientExec";

  @Override
  public String classFileMarker() {
    return "org/apache/http/impl/execchain/M"; // the common prefix of both class names
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return namedOneOf(MAIN, MINIMAL);
  }

  @Override
  public void transform(Transformer t) {
    // execute(HttpRoute, HttpRequestWrapper, HttpClientContext, HttpExecutionAware), the ClientExecChain method
    t.applyAdvice(isPublic().and(named("execute")).and(takesArguments(4)), ClientExecAdvice.class);
  }
}
