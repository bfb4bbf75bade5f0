package dev.fencing.agent.instrumentation.httpurlconnection;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * sun.net.www.http.HttpClient, the connection of the JDK's HttpURLConnection (http, and https through its subclass
 * HttpsClient): its writeRequests(MessageHeader, PosterOutputStream) writes every request the HttpURLConnection sends,
 * each attempt on its own (the first, a followed redirect, an authentication round, the re-send HttpClient.parseHTTP
 * makes when a kept-alive connection closed before the status line). The three-argument overload and the connection's
 * own re-send both call it.
 */
final class WriteRequestsInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "sun/net/www/http/HttpClient";
  }

  @Override
  public boolean bootstrapClasses() {
    return true;
  }

  @Override
  public String className() {
    return "sun.net.www.http.HttpClient";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("sun.net.www.http.HttpClient");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(isPublic().and(named("writeRequests")).and(takesArguments(2))
        .and(takesArgument(0, named("sun.net.www.MessageHeader"))), WriteRequestsAdvice.class);
  }
}
