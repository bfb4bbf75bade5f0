package dev.fencing.agent.instrumentation.api;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.util.function.Consumer;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * One library class, by its exact name, and the advice on its methods: the commonest instrumentation, a hook on a
 * known implementation class. Matched by name only ({@link #className()}), so the transformer needs neither a byte
 * search nor a parse for any other class.
 */
public final class NamedTypeInstrumentation implements TypeInstrumentation {
  private final String library;
  private final String className;
  private final boolean bootClass;
  private final Consumer<Transformer> advice;

  /**
   * @param library what {@link #toString()} names it by ("Curator", "jetcd", "Reactor Netty")
   * @param advice applies the advice to the class's methods
   */
  public NamedTypeInstrumentation(String library, String className, Consumer<Transformer> advice) {
    this(library, className, false, advice);
  }

  private NamedTypeInstrumentation(String library, String className, boolean bootClass, Consumer<Transformer> advice) {
    this.library = library;
    this.className = className;
    this.bootClass = bootClass;
    this.advice = advice;
  }

  /**
   * A class of the JDK that the boot loader loads (the executors of java.util.concurrent): the transformer considers
   * it among boot classes, and the agent retransforms it if the JVM loaded it before premain.
   */
  public static NamedTypeInstrumentation bootClass(String library, String className, Consumer<Transformer> advice) {
    return new NamedTypeInstrumentation(library, className, true, advice);
  }

  /** The methods called {@code name} with {@code arguments} parameters. */
  public static ElementMatcher.Junction<MethodDescription> method(String name, int arguments) {
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
  public boolean bootstrapClasses() {
    return bootClass;
  }

  @Override
  public String bootClassName() {
    return bootClass ? className : null;
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
    return library + " " + className.substring(className.lastIndexOf('.') + 1);
  }
}
