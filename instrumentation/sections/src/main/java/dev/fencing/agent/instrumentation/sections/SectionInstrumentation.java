package dev.fencing.agent.instrumentation.sections;

import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isMethod;
import static net.bytebuddy.matcher.ElementMatchers.isNative;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.returns;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.api.SectionLoading;
import java.util.List;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * One declared class, matched by its exact (binary) name, never its subclasses: every method with a declared name
 * (all overloads, static or not, whatever their visibility) gets the section advice; {@code void} methods the one that
 * may skip them. What matched is reported to {@link SectionLoading} for /status.
 */
final class SectionInstrumentation implements TypeInstrumentation {
  private final String className;
  private final String[] methods;

  SectionInstrumentation(String className, List<String> methods) {
    this.className = className;
    this.methods = methods.toArray(new String[0]);
  }

  @Override
  public String classFileMarker() {
    return className.replace('.', '/');
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return type -> {
      if (!type.getName().equals(className)) {
        return false;
      }
      SectionLoading.classSeen(className);
      return true;
    };
  }

  @Override
  public void transform(Transformer t) {
    ElementMatcher.Junction<MethodDescription> declared = isMethod().and(namedOneOf(methods)).and(not(isAbstract()))
        .and(not(isNative()));
    t.applyAdvice(reporting(declared.and(returns(void.class))), VoidSectionAdvice.class);
    t.applyAdvice(reporting(declared.and(not(returns(void.class)))), ValueSectionAdvice.class);
  }

  /** The matcher, reporting each method it accepts as instrumented. */
  private ElementMatcher<MethodDescription> reporting(ElementMatcher<MethodDescription> matcher) {
    return m -> {
      if (!matcher.matches(m)) {
        return false;
      }
      SectionLoading.methodInstrumented(className + "." + m.getName());
      return true;
    };
  }

  @Override
  public String toString() {
    return "sections of " + className;
  }
}
