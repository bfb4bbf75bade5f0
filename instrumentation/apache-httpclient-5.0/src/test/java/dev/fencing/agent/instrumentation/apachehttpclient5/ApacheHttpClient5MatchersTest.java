package dev.fencing.agent.instrumentation.apachehttpclient5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The module's markers and matchers against the real jars of the oldest and the latest supported 5.x (as
 * testing/library-versions resolves them): each hook finds its classes, in each exactly one method to advise, and its
 * advice weaves into them. Catches a library release that renames or reshapes a hooked method or a field the advice
 * reads before any integration test runs.
 */
class ApacheHttpClient5MatchersTest {
  /** Class name → number of advised methods, over every class of the library the instrumentations select. */
  private static Map<String, Integer> advised(String end) throws IOException {
    return LibraryCheck.advised(new ApacheHttpClient5InstrumentationModule(), LibraryCheck.versionJars("httpclient5",
        end));
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void everyHookFindsExactlyOneMethodInItsClasses(String end) throws IOException {
    Map<String, Integer> advised = advised(end);
    assertThat(advised).containsEntry("org.apache.hc.client5.http.impl.classic.ConnectExec", 1)
        .containsEntry("org.apache.hc.client5.http.impl.async.AsyncConnectExec", 1)
        .containsEntry("org.apache.hc.client5.http.impl.async.HttpAsyncMainClientExec$1", 1)
        .containsEntry("org.apache.hc.client5.http.impl.async.H2AsyncMainClientExec$1", 1)
        .containsEntry("org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy", 1);
    assertThat(advised.values()).as("classes selected but without a method to advise: %s", advised).containsOnly(1);
  }
}
