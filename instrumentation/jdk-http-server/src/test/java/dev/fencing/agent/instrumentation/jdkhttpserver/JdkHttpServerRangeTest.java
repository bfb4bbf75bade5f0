package dev.fencing.agent.instrumentation.jdkhttpserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The inbound hook against the JDK HttpServer of Java 17 and Java 25 (their own jdk.httpserver): it selects
 * Filter.Chain, advises its doFilter(exchange) and its advice weaves.
 */
class JdkHttpServerRangeTest {
  /** The JDK of this build (17) and the newest supported one (fencing.test.java25, set by the root pom). */
  static Path javaHome(String which) {
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

  @ParameterizedTest
  @ValueSource(strings = {"17", "25"})
  void theHooksSelectTheirJdkClassesAndTheirAdviceWeaves(String java) throws Exception {
    Map<String, Integer> advised =
        LibraryCheck.advisedInJdk(new JdkHttpServerInstrumentationModule(), javaHome(java), "jdk.httpserver");
    assertThat(advised).containsExactly(Map.entry("com.sun.net.httpserver.Filter$Chain", 1));
  }
}
