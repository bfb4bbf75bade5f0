package dev.fencing.agent.instrumentation;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.pool.TypePool;

/**
 * An instrumentation module against the real jars of one library version, as the agent would meet them: which of
 * their classes it selects (marker and type matcher), how many methods it advises in each, and whether the advice can
 * be woven into them at all. Weaving fails when advice relies on a field or method the library no longer has (an
 * {@code @Advice.FieldValue} of a renamed private field, say): in a production JVM that class would load unfenced,
 * with one warning; here the module's test fails on the library release that changed it. Used by the instrumentation
 * modules' tests, at the oldest and the latest version each supports.
 */
public final class LibraryCheck {
  private LibraryCheck() {}

  /** Class name → advised methods, over every class of {@code jars} the module's instrumentations select. */
  public static Map<String, Integer> advised(InstrumentationModule module, List<Path> jars) throws IOException {
    if (jars.isEmpty()) {
      throw new IllegalArgumentException("no library jars given");
    }
    List<JarFile> open = new ArrayList<>();
    try {
      List<ClassFileLocator> locators = new ArrayList<>();
      for (Path p : jars) {
        JarFile jar = new JarFile(p.toFile());
        open.add(jar);
        locators.add(new ClassFileLocator.ForJarFile(jar));
      }
      locators.add(ClassFileLocator.ForClassLoader.ofSystemLoader()); // java.* supertypes
      ClassFileLocator locator = new ClassFileLocator.Compound(locators);
      TypePool pool = TypePool.Default.WithLazyResolution.of(locator);
      ClassFileLocator agentClasses = ClassFileLocator.ForClassLoader.of(LibraryCheck.class.getClassLoader());
      TypePool advicePool = TypePool.Default.WithLazyResolution.of(agentClasses);
      Map<String, Integer> advised = new TreeMap<>();
      for (JarFile jar : open) {
        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
          String file = e.nextElement().getName();
          if (!file.endsWith(".class") || file.contains("module-info") || file.startsWith("META-INF/")) {
            continue;
          }
          byte[] bytes = jar.getInputStream(jar.getEntry(file)).readAllBytes();
          String name = file.substring(0, file.length() - ".class".length()).replace('/', '.');
          for (TypeInstrumentation type : module.typeInstrumentations()) {
            if (type.className() != null && !type.className().equals(name)) {
              continue; // as the transformer: an instrumentation of one class by name looks at no other class
            }
            if (!FencingTransformer.contains(bytes, type.classFileMarker().getBytes(StandardCharsets.US_ASCII))) {
              continue;
            }
            TypeDescription td = pool.describe(name).resolve();
            if (!type.typeMatcher().matches(td)) {
              continue;
            }
            advised.merge(name, weave(type, td, locator, pool, advicePool, agentClasses), Integer::sum);
          }
        }
      }
      return advised;
    } finally {
      for (JarFile jar : open) {
        jar.close();
      }
    }
  }

  /** Weaves every advice of {@code type} into {@code td} as the agent does; returns the number of advised methods. */
  private static int weave(TypeInstrumentation type, TypeDescription td, ClassFileLocator locator, TypePool pool,
      TypePool advicePool, ClassFileLocator agentClasses) {
    List<ElementMatcher<? super MethodDescription>> methods = new ArrayList<>();
    List<Class<?>> advices = new ArrayList<>();
    type.transform((m, advice) -> {
      methods.add(m);
      advices.add(advice);
    });
    int n = 0;
    DynamicType.Builder<?> builder = FencingTransformer.byteBuddy().redefine(td, locator);
    for (int i = 0; i < methods.size(); i++) {
      for (MethodDescription md : td.getDeclaredMethods()) {
        if (methods.get(i).matches(md)) {
          n++;
        }
      }
      builder = builder.visit(Advice.to(advicePool.describe(advices.get(i).getName()).resolve(), agentClasses)
          .on(methods.get(i)));
    }
    try {
      builder.make(pool);
    } catch (RuntimeException e) {
      throw new IllegalStateException("advice of " + type.getClass().getSimpleName() + " cannot be woven into "
          + td.getName() + ": " + e.getMessage(), e);
    }
    return n;
  }
}
