package dev.fencing.agent.instrumentation.jdkhttpserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The inbound hook against the JDK HttpServer of Java 17 and Java 25 (their own jdk.httpserver): it selects
 * Filter.Chain, advises its doFilter(exchange) and its advice weaves.
 */
class JdkHttpServerRangeTest {
  @ParameterizedTest
  @ValueSource(strings = {"17", "25"})
  void theHooksSelectTheirJdkClassesAndTheirAdviceWeaves(String java) throws Exception {
    Map<String, Integer> advised =
        LibraryCheck.advisedInJdk(new JdkHttpServerInstrumentationModule(), LibraryCheck.testedJdk(java), "jdk.httpserver");
    assertThat(advised).containsExactly(Map.entry("com.sun.net.httpserver.Filter$Chain", 1));
  }
}
