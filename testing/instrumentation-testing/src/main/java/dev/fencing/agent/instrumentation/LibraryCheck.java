package dev.fencing.agent.instrumentation;

import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
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
 * modules' tests, at the oldest and the latest version each supports (for the JDK's own classes: Java 17 and 25).
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
      Map<String, byte[]> classes = new TreeMap<>();
      for (JarFile jar : open) {
        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
          String file = e.nextElement().getName();
          if (file.endsWith(".class") && !file.contains("module-info") && !file.startsWith("META-INF/")) {
            classes.put(file, jar.getInputStream(jar.getEntry(file)).readAllBytes());
          }
        }
      }
      return advised(module, classes, new ClassFileLocator.Compound(locators));
    } finally {
      for (JarFile jar : open) {
        jar.close();
      }
    }
  }

  /**
   * The jars of {@code library}'s {@code end} ("oldest", "latest") as testing/library-versions resolved them: the
   * folder the module's surefire configuration names in the system property {@code fencing.test.<library>.<end>}.
   */
  public static List<Path> versionJars(String library, String end) throws IOException {
    String key = "fencing.test." + library + "." + end;
    String dir = System.getProperty(key);
    if (dir == null) {
      throw new IllegalStateException(key + " is not set: run the test through Maven (the module's pom names the "
          + "testing/library-versions folder)");
    }
    return jarsIn(Path.of(dir), "build testing/library-versions first (mvn install)");
  }

  /** The jars in {@code dir}, sorted; fails saying {@code howToFill} when there are none or it is missing. */
  private static List<Path> jarsIn(Path dir, String howToFill) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> jars = files.filter(f -> f.toString().endsWith(".jar")).sorted().toList();
      if (jars.isEmpty()) {
        throw new IllegalStateException("no jars in " + dir + ": " + howToFill);
      }
      return jars;
    } catch (java.nio.file.NoSuchFileException e) {
      throw new IllegalStateException(dir + " is missing: " + howToFill, e);
    }
  }

  /**
   * A class loader of {@code jars} alone (its parent is the platform loader), so that a test can run a helper on the
   * real classes of one library version, whichever version the module compiles against. Close it after use.
   */
  public static java.net.URLClassLoader isolated(List<Path> jars) throws IOException {
    java.net.URL[] urls = new java.net.URL[jars.size()];
    for (int i = 0; i < urls.length; i++) {
      urls[i] = jars.get(i).toUri().toURL();
    }
    return new java.net.URLClassLoader("library-check", urls, ClassLoader.getPlatformClassLoader());
  }

  /**
   * Calls the public method {@code method} of {@code target} whose parameters take {@code args} (non-null, reference
   * types), for a test that works on classes of an {@link #isolated} loader, which it cannot name. Fails when there is
   * no such method or more than one.
   */
  public static Object invoke(Object target, String method, Object... args) throws Exception {
    java.lang.reflect.Method found = null;
    for (java.lang.reflect.Method m : target.getClass().getMethods()) {
      if (m.getName().equals(method) && !m.isBridge() && accepts(m.getParameterTypes(), args)) {
        if (found != null) {
          throw new IllegalArgumentException(target.getClass().getName() + " has more than one public " + method
              + " taking " + args.length + " parameters");
        }
        found = m;
      }
    }
    if (found == null) {
      throw new IllegalArgumentException(target.getClass().getName() + " has no public " + method + " taking "
          + args.length + " parameters");
    }
    return found.invoke(target, args);
  }

  private static boolean accepts(Class<?>[] types, Object[] args) {
    if (types.length != args.length) {
      return false;
    }
    for (int i = 0; i < types.length; i++) {
      if (!types[i].isInstance(args[i])) {
        return false;
      }
    }
    return true;
  }

  /**
   * The JDK a range test checks: "17" is the one running the build, "25" the newest supported one (the system
   * property {@code fencing.test.java25}, which the root pom sets from {@code fencing.it.java25}).
   */
  public static Path testedJdk(String which) {
    if (which.equals("17")) {
      return Path.of(System.getProperty("java.home"));
    }
    String home = System.getProperty("fencing.test.java25");
    if (home == null || !Files.isDirectory(Path.of(home))) {
      throw new IllegalStateException("Java 25 not found at fencing.test.java25=" + home
          + ": install it there or pass -Dfencing.it.java25=<JDK 25 home>");
    }
    return Path.of(home);
  }

  /**
   * The same for the JDK's own classes: every class of the named modules ({@code java.base}, {@code java.net.http},
   * ...) of the JDK installed at {@code javaHome}, read from that JDK's run-time image (not the one running the test),
   * supertypes included, so one build can check the module against each JDK it supports.
   */
  public static Map<String, Integer> advisedInJdk(InstrumentationModule module, Path javaHome, String... jdkModules)
      throws IOException {
    if (!Files.isRegularFile(javaHome.resolve("lib/modules"))) {
      throw new IllegalArgumentException("not a JDK home (no lib/modules): " + javaHome);
    }
    try (FileSystem jrt = FileSystems.newFileSystem(URI.create("jrt:/"), Map.of("java.home", javaHome.toString()))) {
      List<Path> roots;
      try (Stream<Path> s = Files.list(jrt.getPath("/modules"))) {
        roots = s.toList();
      }
      Map<String, byte[]> classes = new TreeMap<>();
      for (String name : jdkModules) {
        Path root = jrt.getPath("/modules", name);
        if (!Files.isDirectory(root)) {
          throw new IllegalArgumentException("no module " + name + " in " + javaHome);
        }
        try (Stream<Path> files = Files.walk(root)) {
          for (Path f : (Iterable<Path>) files::iterator) {
            String file = root.relativize(f).toString();
            if (file.endsWith(".class") && !file.contains("module-info")) {
              classes.put(file, Files.readAllBytes(f));
            }
          }
        }
      }
      return advised(module, classes, new JrtLocator(roots));
    }
  }

  /** Over {@code classes} (class file path → bytes), as the transformer would meet them. */
  private static Map<String, Integer> advised(InstrumentationModule module, Map<String, byte[]> classes,
      ClassFileLocator locator) {
    TypePool pool = TypePool.Default.WithLazyResolution.of(locator);
    ClassFileLocator agentClasses = ClassFileLocator.ForClassLoader.of(LibraryCheck.class.getClassLoader());
    TypePool advicePool = TypePool.Default.WithLazyResolution.of(agentClasses);
    Map<String, Integer> advised = new TreeMap<>();
    Map<String, SuperTypeFilter.Header> headers = new java.util.HashMap<>();
    for (Map.Entry<String, byte[]> c : classes.entrySet()) {
      String file = c.getKey();
      String name = file.substring(0, file.length() - ".class".length()).replace('/', '.');
      for (TypeInstrumentation type : module.typeInstrumentations()) {
        if (type.className() != null && !type.className().equals(name)) {
          continue; // as the transformer: an instrumentation of one class by name looks at no other class
        }
        if (!FencingTransformer.contains(c.getValue(), type.classFileMarker().getBytes(StandardCharsets.US_ASCII))) {
          continue;
        }
        if (type.superTypeNames() != null && !SuperTypeFilter.mayHaveSuperType(SuperTypeFilter.parse(c.getValue()),
            internalNames(type.superTypeNames()), headers, n -> header(locator, n))) {
          continue; // as the transformer: ruled out by the class-file headers (the range tests' counts hold with it)
        }
        TypeDescription td = pool.describe(name).resolve();
        try {
          if (!type.typeMatcher().matches(td)) {
            continue;
          }
        } catch (TypePool.Resolution.NoSuchTypeException optional) {
          // a supertype from an optional dependency not given here (a driver's OSGi activator, its servlet
          // listener): without it the JVM cannot load this class at all, so the agent never meets it
          continue;
        }
        advised.merge(name, weave(type, td, locator, pool, advicePool, agentClasses), Integer::sum);
      }
    }
    return advised;
  }

  private static java.util.Set<String> internalNames(java.util.Set<String> names) {
    java.util.Set<String> internal = new java.util.HashSet<>();
    for (String n : names) {
      internal.add(n.replace('.', '/'));
    }
    return internal;
  }

  /** A class file's header through the locator (the JDK's classes through the running JVM's), or null. */
  private static SuperTypeFilter.Header header(ClassFileLocator locator, String internalName) {
    try {
      ClassFileLocator.Resolution r = locator.locate(internalName.replace('/', '.'));
      if (r.isResolved()) {
        return SuperTypeFilter.parse(r.resolve());
      }
      try (java.io.InputStream in = ClassLoader.getPlatformClassLoader().getResourceAsStream(internalName + ".class")) {
        return in == null ? null : SuperTypeFilter.parse(in.readAllBytes());
      }
    } catch (IOException e) {
      return null;
    }
  }

  /** Class files of a JDK run-time image, by class name, over its module directories. */
  private static final class JrtLocator implements ClassFileLocator {
    private final List<Path> moduleRoots;

    JrtLocator(List<Path> moduleRoots) {
      this.moduleRoots = moduleRoots;
    }

    @Override
    public Resolution locate(String name) throws IOException {
      String file = name.replace('.', '/') + ".class";
      for (Path root : moduleRoots) {
        Path p = root.resolve(file);
        if (Files.isRegularFile(p)) {
          return new Resolution.Explicit(Files.readAllBytes(p));
        }
      }
      return new Resolution.Illegal(name);
    }

    @Override
    public void close() {}
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
