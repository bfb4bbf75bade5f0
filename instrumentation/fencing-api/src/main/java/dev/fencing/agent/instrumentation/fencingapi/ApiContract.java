package dev.fencing.agent.instrumentation.fencingapi;

import net.bytebuddy.description.annotation.AnnotationDescription;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.method.ParameterList;
import net.bytebuddy.description.type.TypeDescription;

/**
 * What the agent relies on in the application's copy of the API, read from class files (any version of the API, the
 * agent never loading it): the method the read advice goes on, the factory it calls, and the annotation and its lock.
 * An API whose members differ is left alone: it stays a no-op.
 */
final class ApiContract {
  static final String FENCING = "dev.fencing.api.Fencing";
  static final String CONTEXT = "dev.fencing.api.FencingContext";
  static final String FENCED = "dev.fencing.api.Fenced";

  private ApiContract() {}

  /**
   * True for {@code public static FencingContext current()} of a {@code Fencing} whose {@code FencingContext} has
   * {@code public static FencingContext of(String, long, String)}, which the advice calls.
   */
  static boolean isCurrent(MethodDescription m) {
    if (!m.getName().equals("current") || !m.isStatic() || !m.isPublic() || !m.getParameters().isEmpty()) {
      return false;
    }
    TypeDescription returned = m.getReturnType().asErasure();
    if (!returned.getName().equals(CONTEXT)) {
      return false;
    }
    for (MethodDescription.InDefinedShape f : returned.getDeclaredMethods()) {
      if (f.getName().equals("of") && f.isStatic() && f.isPublic() && f.getReturnType().asErasure().equals(returned)
          && takes(f.getParameters(), "java.lang.String", "long", "java.lang.String")) {
        return true;
      }
    }
    return false;
  }

  private static boolean takes(ParameterList<?> parameters, String... types) {
    if (parameters.size() != types.length) {
      return false;
    }
    for (int i = 0; i < types.length; i++) {
      if (!parameters.get(i).getType().asErasure().getName().equals(types[i])) {
        return false;
      }
    }
    return true;
  }

  /**
   * The lock of a method annotated {@code @Fenced(lock)} that can carry the section advice (not abstract, not
   * native); null for any other method.
   */
  static String fencedLock(MethodDescription m) {
    if (m.isAbstract() || m.isNative() || m.isConstructor() || m.isTypeInitializer()) {
      return null;
    }
    for (AnnotationDescription a : m.getDeclaredAnnotations()) {
      if (a.getAnnotationType().getName().equals(FENCED)) {
        Object value = a.getValue("value").resolve();
        return value instanceof String ? (String) value : null;
      }
    }
    return null;
  }

  /** The key of the section table: {@code <class>.<method>}, as the advice's {@code #t.#m} spells it. */
  static String origin(TypeDescription type, MethodDescription m) {
    return type.getName() + "." + m.getName();
  }
}
