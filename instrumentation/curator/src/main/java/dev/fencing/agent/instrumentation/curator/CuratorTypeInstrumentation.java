package dev.fencing.agent.instrumentation.curator;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.TypeInstrumentation;
import java.util.function.Consumer;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/** One Curator recipe class, by its exact name, and the advice on its methods. */
final class CuratorTypeInstrumentation implements TypeInstrumentation {
  static final String RECIPES = "org.apache.curator.framework.recipes.";

  private final String className;
  private final Consumer<Transformer> advice;

  CuratorTypeInstrumentation(String className, Consumer<Transformer> advice) {
    this.className = className;
    this.advice = advice;
  }

  static ElementMatcher.Junction<MethodDescription> method(String name, int arguments) {
    return named(name).and(takesArguments(arguments));
  }

  @Override
  public String classFileMarker() {
    return className.replace('.', '/');
  }

  @Override
  public String className() {
    return className;
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named(className);
  }

  @Override
  public void transform(Transformer t) {
    advice.accept(t);
  }

  @Override
  public String toString() {
    return "Curator " + className.substring(className.lastIndexOf('.') + 1);
  }
}
