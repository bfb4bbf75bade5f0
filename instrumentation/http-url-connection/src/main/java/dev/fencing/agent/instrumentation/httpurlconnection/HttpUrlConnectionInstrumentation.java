package dev.fencing.agent.instrumentation.httpurlconnection;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The JDK's implementation class, sun.net.www.protocol.http.HttpURLConnection, which also serves https (the https
 * connection delegates to a subclass of it). Only this class: other HttpURLConnection subclasses are other libraries.
 */
final class HttpUrlConnectionInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "sun/net/www/protocol/http/HttpURLConnection";
  }

  @Override
  public boolean bootstrapClasses() {
    return true;
  }

  @Override
  public String className() {
    return "sun.net.www.protocol.http.HttpURLConnection";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("sun.net.www.protocol.http.HttpURLConnection");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(isPublic().and(namedOneOf("connect", "getOutputStream", "getInputStream")).and(takesArguments(0)),
        ConnectAdvice.class);
  }
}
