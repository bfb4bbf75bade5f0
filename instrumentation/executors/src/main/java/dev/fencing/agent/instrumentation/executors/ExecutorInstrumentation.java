package dev.fencing.agent.instrumentation.executors;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;

import dev.fencing.agent.instrumentation.TypeInstrumentation;
import java.util.concurrent.Callable;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * One JDK executor class by name: the public methods that accept a task as a {@link Runnable} or {@link Callable}
 * get the task wrapped. Only JDK classes: application executors nearly always delegate to one of them, and matching
 * every Executor implementation would parse half the class path. ForkJoinTask arguments are left alone (they are
 * not wrappable without changing their type).
 */
final class ExecutorInstrumentation implements TypeInstrumentation {
  private final String className;
  private final String[] methods;

  private ExecutorInstrumentation(String className, String[] methods) {
    this.className = className;
    this.methods = methods;
  }

  static ExecutorInstrumentation of(String className, String... methods) {
    return new ExecutorInstrumentation(className, methods);
  }

  @Override
  public String classFileMarker() {
    return className.replace('.', '/');
  }

  @Override
  public boolean bootstrapClasses() {
    return true;
  }

  @Override
  public String bootClassName() {
    return className;
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
    t.applyAdvice(isPublic().and(namedOneOf(methods)).and(takesArgument(0, Runnable.class)), WrapRunnableAdvice.class);
    t.applyAdvice(isPublic().and(namedOneOf(methods)).and(takesArgument(0, Callable.class)), WrapCallableAdvice.class);
  }
}
