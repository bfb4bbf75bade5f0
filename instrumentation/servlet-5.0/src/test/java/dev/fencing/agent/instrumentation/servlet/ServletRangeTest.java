package dev.fencing.agent.instrumentation.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The inbound hook against real Jakarta containers (as testing/library-versions resolves them): Tomcat 10.1.48 and
 * 11.0.27, Jetty 12 ee10. Where each hands a request to the application (its FilterChain implementation, and
 * HttpServlet.service for a servlet called without a chain) is selected with exactly one method, no class gets two,
 * and the advice weaves. javax.servlet containers (Tomcat 9, Jetty 12 ee8) are not hooked: the marker names jakarta.servlet only.
 */
class ServletRangeTest {
  private static Map<String, Integer> advised(String container, String end) throws IOException {
    return LibraryCheck.advised(new ServletInstrumentationModule(), LibraryCheck.versionJars(container, end));
  }

  @ParameterizedTest
  @CsvSource({
      "tomcat, oldest, org.apache.catalina.core.ApplicationFilterChain",
      "tomcat, latest, org.apache.catalina.core.ApplicationFilterChain",
      "jetty, latest, org.eclipse.jetty.ee10.servlet.ServletHandler$Chain"})
  void theContainersFilterChainAndHttpServletAreHookedAndTheAdviceWeaves(String container, String end, String chain)
      throws IOException {
    Map<String, Integer> advised = advised(container, end);
    assertThat(advised).as(container + " " + end).containsEntry(chain, 1)
        .containsEntry("jakarta.servlet.http.HttpServlet", 1);
    // at most one entry point per class (abstract ones such as GenericServlet have none of their own)
    assertThat(advised.values()).as("%s", advised).allMatch(n -> n <= 1);
  }
}
