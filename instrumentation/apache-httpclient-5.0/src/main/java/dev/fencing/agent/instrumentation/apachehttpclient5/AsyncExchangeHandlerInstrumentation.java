package dev.fencing.agent.instrumentation.apachehttpclient5;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The exchange handler the async main exec (HTTP/1.1 and HTTP/2) hands to the connection for one attempt: its
 * consumeResponse sees each final response of each attempt exactly once (an anonymous class in every 5.x, hence the
 * match on the enclosing class's name plus the interface). The exec callbacks above it are wrapped once per chain
 * element, so hooking those would count a response several times.
 */
final class AsyncExchangeHandlerInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "AsyncMainClientExec$";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return nameStartsWith("org.apache.hc.client5.http.impl.async.HttpAsyncMainClientExec$")
        .or(nameStartsWith("org.apache.hc.client5.http.impl.async.H2AsyncMainClientExec$"))
        .and(hasSuperType(named("org.apache.hc.core5.http.nio.AsyncClientExchangeHandler")));
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(isPublic().and(named("consumeResponse")).and(takesArguments(3)), AsyncResponseAdvice.class);
  }
}
