package dev.fencing.agent.instrumentation.apachehttpclient5;

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
 * Every HttpRequestRetryStrategy (the default one and the application's own): a FencingBlockedException is an
 * IOException, which the retry execs would otherwise retry for idempotent methods (PUT, DELETE), deciding and
 * counting the same blocked request again. The marker is the common suffix of the interface and
 * DefaultHttpRequestRetryStrategy, one of which a strategy's class file names.
 */
final class RetryStrategyInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "HttpRequestRetryStrategy";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return not(isInterface()).and(hasSuperType(named("org.apache.hc.client5.http.HttpRequestRetryStrategy")));
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("retryRequest").and(not(isAbstract())).and(takesArguments(4))
        .and(takesArgument(1, named("java.io.IOException"))), NoRetryWhenBlockedAdvice.class);
  }
}
