package dev.fencing.agent.instrumentation.fencingapi;

import static net.bytebuddy.matcher.ElementMatchers.returns;

import dev.fencing.agent.bootstrap.FencingApi;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Any class with a method annotated {@code @Fenced("<lock>")}: those methods get the section advice ({@code void} ones
 * the one that may skip them), and each is reported to the bridge as its class is defined, so the section is in the
 * table before its first call and the agent campaigns for the lock.
 */
final class FencedMethodInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "Ldev/fencing/api/Fenced;";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return type -> !type.isInterface() && !type.isAnnotation()
        && type.getDeclaredMethods().stream().anyMatch(m -> ApiContract.fencedLock(m) != null);
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(declaring(returns(void.class)), VoidFencedAdvice.class);
    t.applyAdvice(declaring(m -> !m.getReturnType().represents(void.class)), ValueFencedAdvice.class);
  }

  /** The annotated methods {@code also} accepts, each reported to the bridge as a section of its lock. */
  private static ElementMatcher<MethodDescription> declaring(ElementMatcher<? super MethodDescription> also) {
    return m -> {
      String lock = ApiContract.fencedLock(m);
      if (lock == null || !also.matches(m)) {
        return false;
      }
      FencingApi.fenced(ApiContract.origin(m.getDeclaringType().asErasure(), m), lock);
      return true;
    };
  }

  @Override
  public String toString() {
    return "fencing-api @Fenced methods";
  }
}
