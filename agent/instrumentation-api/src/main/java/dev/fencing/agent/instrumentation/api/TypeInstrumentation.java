package dev.fencing.agent.instrumentation.api;

import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/** Which classes to change, and which advice goes on which of their methods. */
public interface TypeInstrumentation {
  /**
   * Text that the class file of every class this instrumentation wants must contain, e.g. {@code java/sql/}: a byte
   * search that lets the transformer skip nearly every class the application loads without parsing it.
   */
  String classFileMarker();

  ElementMatcher<TypeDescription> typeMatcher();

  /**
   * For instrumentations whose type matcher only accepts one class by name ({@code named(...)}): that name. The
   * transformer then compares class names instead of searching every class file for the marker, and parses no other
   * class for it (a class that merely refers to ThreadPoolExecutor is not described and matched). The type matcher
   * still decides on the class of that name.
   */
  default String className() {
    return null;
  }

  /**
   * For instrumentations whose type matcher accepts only classes (no interfaces) that have one of these types as a
   * super type ({@code not(isInterface()).and(hasSuperType(named(...)))}, or {@code hasSuperClass}): their binary
   * names. The transformer then reads the class-file headers of a candidate and its super types first and describes
   * the class with ByteBuddy only when one of these is among them, or its hierarchy cannot be read (a conservative
   * filter: the type matcher still decides). Null (the default): no such filter.
   */
  default java.util.Set<String> superTypeNames() {
    return null;
  }

  /**
   * True when the classes are loaded by the boot loader (java.base's HttpURLConnection): the transformer then
   * considers boot classes for this instrumentation, which it otherwise never touches.
   */
  default boolean bootstrapClasses() {
    return false;
  }

  /**
   * For instrumentations of one boot class by name (the JDK's executors): the class name, so the agent can find it
   * among classes the JVM loaded before premain (Java 25 loads ForkJoinPool that early) and retransform it.
   */
  default String bootClassName() {
    return null;
  }

  /**
   * True (the default) when the advice names bootstrap classes ({@code Fencing}, hooks): the transformer then only
   * changes classes of loaders that resolve them to the boot loader's copies (see {@link BootstrapVisibility}).
   */
  default boolean inlinesBootstrapClasses() {
    return true;
  }

  void transform(Transformer transformer);

  /** Collects (methods, advice class) pairs; advice is inlined, so it may only use bootstrap-visible classes. */
  interface Transformer {
    void applyAdvice(ElementMatcher<? super MethodDescription> methods, Class<?> advice);
  }
}
