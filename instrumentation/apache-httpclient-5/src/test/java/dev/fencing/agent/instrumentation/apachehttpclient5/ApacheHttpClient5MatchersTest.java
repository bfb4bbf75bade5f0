package dev.fencing.agent.instrumentation.apachehttpclient5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.TypeInstrumentation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.pool.TypePool;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The module's markers and matchers against the real jars of the oldest and the latest supported 5.x (copied by the
 * pom's httpclient5-range execution): each hook finds its classes, and in each exactly one method to advise. Catches
 * a library release that renames or reshapes a hooked method before any integration test runs.
 */
class ApacheHttpClient5MatchersTest {
  /** Class name → number of advised methods, over every class of the library the instrumentations select. */
  private static Map<String, Integer> advised(Path dir) throws IOException {
    List<JarFile> jars = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path p : files.filter(f -> f.toString().endsWith(".jar")).toList()) {
        jars.add(new JarFile(p.toFile()));
      }
    }
    assertThat(jars).as("jars in " + dir).isNotEmpty();
    List<ClassFileLocator> locators = new ArrayList<>();
    for (JarFile jar : jars) {
      locators.add(new ClassFileLocator.ForJarFile(jar));
    }
    locators.add(ClassFileLocator.ForClassLoader.ofSystemLoader()); // java.* supertypes
    ClassFileLocator locator = new ClassFileLocator.Compound(locators);
    TypePool pool = TypePool.Default.WithLazyResolution.of(locator);
    Map<String, Integer> advised = new TreeMap<>();
    for (JarFile jar : jars) {
      for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
        JarEntry entry = e.nextElement();
        String file = entry.getName();
        if (!file.endsWith(".class") || file.contains("module-info") || file.startsWith("META-INF/")) {
          continue;
        }
        byte[] bytes = jar.getInputStream(entry).readAllBytes();
        String name = file.substring(0, file.length() - ".class".length()).replace('/', '.');
        for (TypeInstrumentation type : new ApacheHttpClient5InstrumentationModule().typeInstrumentations()) {
          if (!contains(bytes, type.classFileMarker().getBytes(StandardCharsets.US_ASCII))) {
            continue;
          }
          TypeDescription td = pool.describe(name).resolve();
          if (!type.typeMatcher().matches(td)) {
            continue;
          }
          List<ElementMatcher<? super MethodDescription>> methods = new ArrayList<>();
          type.transform((m, advice) -> methods.add(m));
          int n = 0;
          for (MethodDescription md : td.getDeclaredMethods()) {
            for (ElementMatcher<? super MethodDescription> m : methods) {
              if (m.matches(md)) {
                n++;
              }
            }
          }
          advised.merge(name, n, Integer::sum);
        }
      }
    }
    for (JarFile jar : jars) {
      jar.close();
    }
    return advised;
  }

  private static boolean contains(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i <= haystack.length - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void everyHookFindsExactlyOneMethodInItsClasses(String end) throws IOException {
    Map<String, Integer> advised = advised(Path.of(System.getProperty("fencing.test.httpclient5.jars"), end));
    assertThat(advised).containsEntry("org.apache.hc.client5.http.impl.classic.ConnectExec", 1)
        .containsEntry("org.apache.hc.client5.http.impl.async.AsyncConnectExec", 1)
        .containsEntry("org.apache.hc.client5.http.impl.async.HttpAsyncMainClientExec$1", 1)
        .containsEntry("org.apache.hc.client5.http.impl.async.H2AsyncMainClientExec$1", 1)
        .containsEntry("org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy", 1);
    assertThat(advised.values()).as("classes selected but without a method to advise: %s", advised).containsOnly(1);
  }
}
