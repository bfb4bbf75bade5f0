package dev.fencing.agent.instrumentation.okhttp;

import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.method.ParameterList;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The {@code proceed(Request, ...)} overload of a chain that actually calls the next interceptor: the one with the
 * most parameters. OkHttp 4.0 to 4.2 have {@code proceed(Request)} delegating to
 * {@code proceed(Request, Transmitter, Exchange)}, which RetryAndFollowUpInterceptor also calls directly; later
 * versions have {@code proceed(Request)} only. Advising both overloads would decide twice for one attempt.
 */
final class InnermostProceed extends ElementMatcher.Junction.AbstractBase<MethodDescription> {
  private final String requestType;

  InnermostProceed(String requestType) {
    this.requestType = requestType;
  }

  @Override
  public boolean matches(MethodDescription method) {
    if (!isProceed(method)) {
      return false;
    }
    int arity = method.getParameters().size();
    for (MethodDescription other : method.getDeclaringType().getDeclaredMethods()) {
      if (isProceed(other) && other.getParameters().size() > arity) {
        return false;
      }
    }
    return true;
  }

  private boolean isProceed(MethodDescription m) {
    if (!m.getName().equals("proceed") || m.isStatic() || m.isAbstract() || m.isBridge() || m.isSynthetic()) {
      return false;
    }
    ParameterList<?> params = m.getParameters();
    return !params.isEmpty() && params.get(0).getType().asErasure().getName().equals(requestType);
  }
}
