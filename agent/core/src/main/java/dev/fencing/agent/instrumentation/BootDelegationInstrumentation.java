package dev.fencing.agent.instrumentation;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import static net.bytebuddy.matcher.ElementMatchers.declaresMethod;
import static net.bytebuddy.matcher.ElementMatchers.hasSuperClass;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.isStatic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Makes every application class loader delegate the agent's bootstrap package to the boot loader, as the
 * OpenTelemetry agent does for its own. Advice is inlined into driver and client classes and names bootstrap classes
 * ({@code Fencing}, {@code JdbcHook}); a loader that resolves only its own packages and {@code java.*} (JBoss Modules,
 * OSGi bundles, parent-last web app loaders) would otherwise fail those references with NoClassDefFoundError inside
 * the application's Statement.execute. Installed whenever another instrumentation is (switch: {@link #NAME}); JDK
 * loaders (boot classes) already delegate and are not touched.
 */
final class BootDelegationInstrumentation implements TypeInstrumentation {
  /** Its switch: {@code fencing.instrumentation.class-loaders.enabled}. */
  static final String NAME = "class-loaders";

  @Override
  public String classFileMarker() {
    return "loadClass"; // in the constant pool of every class declaring (or calling) a loadClass method
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    // The class's own methods first (read from its bytes): most classes with the marker only call loadClass, and
    // walking their super classes would read those classes' files. A loader inheriting its loadClass from another
    // application class gets that class instrumented instead.
    return not(isInterface()).and(declaresMethod(loadClass())).and(hasSuperClass(named("java.lang.ClassLoader")));
  }

  @Override
  public java.util.Set<String> superTypeNames() {
    return java.util.Set.of("java.lang.ClassLoader");
  }

  /** A method, not a constant: ByteBuddy's matchers load only when the first candidate class does, never in premain. */
  private static ElementMatcher.Junction<MethodDescription> loadClass() {
    return named("loadClass").and(not(isStatic())).and(not(isAbstract()))
        .and(takesArguments(String.class).or(takesArguments(String.class, boolean.class)));
  }

  @Override
  public boolean inlinesBootstrapClasses() {
    return false; // its advice names JDK classes only: it is what lets the loader see the bootstrap part
  }

  @Override
  public void transform(Transformer transformer) {
    transformer.applyAdvice(loadClass(), BootDelegationAdvice.class);
  }
}
