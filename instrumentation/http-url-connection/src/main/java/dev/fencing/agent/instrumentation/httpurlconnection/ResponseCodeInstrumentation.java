package dev.fencing.agent.instrumentation.httpurlconnection;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/** java.net.HttpURLConnection itself: getResponseCode is declared there, not in the JDK's implementation class. */
final class ResponseCodeInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "java/net/HttpURLConnection";
  }

  @Override
  public boolean bootstrapClasses() {
    return true;
  }

  @Override
  public String className() {
    return "java.net.HttpURLConnection";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("java.net.HttpURLConnection");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(isPublic().and(named("getResponseCode")).and(takesArguments(0)), ResponseCodeAdvice.class);
  }
}
