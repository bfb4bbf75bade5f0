package dev.fencing.agent.instrumentation.apachehttpclient4;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The module against the real jars of the oldest (4.5) and the latest (4.5.14) supported HttpClient 4.x, as
 * testing/library-versions resolves them: both exec-chain ends and the built-in retry handlers are selected, each
 * with exactly one method to advise (or none where it inherits it), and the advice (which calls HttpRoute.getTargetHost, HttpRequest.getRequestLine,
 * setHeader/removeHeaders and HttpResponse.getStatusLine) weaves into them. A release that renames or reshapes one of
 * them fails here, not in a production JVM.
 */
class ApacheHttpClient4RangeTest {
  private static Map<String, Integer> advised(String end) throws IOException {
    List<Path> jars = LibraryCheck.versionJars("httpclient4", end);
    assertThat(jars).as("jars of the " + end + " HttpClient 4").anyMatch(j -> j.getFileName().toString()
        .startsWith("httpclient-4."));
    return LibraryCheck.advised(new ApacheHttpClient4InstrumentationModule(), jars);
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void everyHookFindsExactlyOneMethodInItsClassesAndItsAdviceWeaves(String end) throws IOException {
    assertThat(advised(end)).containsExactlyInAnyOrderEntriesOf(Map.of(
        "org.apache.http.impl.execchain.MainClientExec", 1,
        "org.apache.http.impl.execchain.MinimalClientExec", 1,
        "org.apache.http.impl.client.DefaultHttpRequestRetryHandler", 1,
        // a subclass of the default handler that inherits its (advised) retryRequest
        "org.apache.http.impl.client.StandardHttpRequestRetryHandler", 0));
  }
}
