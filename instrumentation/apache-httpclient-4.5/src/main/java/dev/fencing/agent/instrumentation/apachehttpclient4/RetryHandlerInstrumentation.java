package dev.fencing.agent.instrumentation.apachehttpclient4;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Every HttpRequestRetryHandler (the default and standard ones and the application's own): a FencingBlockedException
 * is an IOException thrown before the request was sent, which DefaultHttpRequestRetryHandler retries for every method
 * (up to three times), deciding and counting the same blocked request again. The marker is the common suffix of the
 * interface and its implementations, one of which a handler's class file names.
 */
final class RetryHandlerInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "HttpRequestRetryHandler";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return not(isInterface()).and(hasSuperType(named("org.apache.http.client.HttpRequestRetryHandler")));
  }

  @Override
  public void transform(Transformer t) {
    // retryRequest(IOException, int executionCount, HttpContext)
    t.applyAdvice(named("retryRequest").and(not(isAbstract())).and(takesArguments(3))
        .and(takesArgument(0, named("java.io.IOException"))), NoRetryWhenBlockedAdvice.class);
  }
}
