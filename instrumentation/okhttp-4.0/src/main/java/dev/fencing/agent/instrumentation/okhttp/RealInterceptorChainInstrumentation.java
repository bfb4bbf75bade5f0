package dev.fencing.agent.instrumentation.okhttp;

import static net.bytebuddy.matcher.ElementMatchers.named;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * OkHttp's RealInterceptorChain (okhttp3.internal.http, the same class in 4.0 through 5.x). Every call, sync or async,
 * runs the chain [application interceptors, RetryAndFollowUp, Bridge, Cache, Connect, network interceptors,
 * CallServer], and RetryAndFollowUp calls proceed once per attempt (first try, retry after a 408 or a failed
 * connection, each redirect) into the bridge stage. That proceed is the hook: it sees every attempt's request after
 * the application interceptors and before any connection exists, and its request argument can be replaced by a copy.
 * Hooking RealCall instead would see one request per call (no redirects, no retries), and its class moved between
 * 4.x releases; hooking the Request.Builder would miss requests built before the token changed.
 */
final class RealInterceptorChainInstrumentation implements TypeInstrumentation {
  static final String REQUEST = "okhttp3.Request";

  @Override
  public String classFileMarker() {
    return "okhttp3/internal/http/RealInterceptorChain";
  }

  @Override
  public String className() {
    return "okhttp3.internal.http.RealInterceptorChain";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("okhttp3.internal.http.RealInterceptorChain");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(new InnermostProceed(REQUEST), ProceedAdvice.class);
  }
}
