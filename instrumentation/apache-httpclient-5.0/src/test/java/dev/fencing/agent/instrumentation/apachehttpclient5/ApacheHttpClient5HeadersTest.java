package dev.fencing.agent.instrumentation.apachehttpclient5;

import static dev.fencing.agent.instrumentation.LibraryCheck.invoke;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.RequestHeaders;
import dev.fencing.agent.instrumentation.LibraryCheck;
import java.net.URLClassLoader;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The header writes of {@link ConnectExecAdvice} and {@link AsyncConnectExecAdvice}
 * ({@link RequestHeaders#APACHE_HTTPCLIENT_5}) on the real classes of the oldest and the latest supported 5.x, for
 * the classic and the async request types: a request that already carries an old pair (a retry's copy) gets each
 * header exactly once, and a grant only when the decision has one.
 */
class ApacheHttpClient5HeadersTest {
  /** The values of {@code name} on {@code message}, through MessageHeaders.getHeaders and Header.getValue. */
  private static List<Object> values(Object message, String name) throws Exception {
    Object[] headers = (Object[]) invoke(message, "getHeaders", name);
    Object[] values = new Object[headers.length];
    for (int i = 0; i < headers.length; i++) {
      values[i] = invoke(headers[i], "getValue");
    }
    return Arrays.asList(values);
  }

  @ParameterizedTest
  @CsvSource({"oldest, BasicClassicHttpRequest", "latest, BasicClassicHttpRequest", "oldest, BasicHttpRequest",
      "latest, BasicHttpRequest"})
  void theAttemptCarriesThePairOnce(String end, String requestType) throws Throwable {
    try (URLClassLoader library = LibraryCheck.isolated(LibraryCheck.versionJars("httpclient5", end))) {
      Object attempt = library.loadClass("org.apache.hc.core5.http.message." + requestType)
          .getConstructor(String.class, String.class).newInstance("PUT", "/entries/1");
      invoke(attempt, "addHeader", "Fencing-Token", "6");
      invoke(attempt, "addHeader", "Fencing-Grant", "old-grant");

      RequestHeaders.APACHE_HTTPCLIENT_5.tag(attempt, Decision.tag("orders", 7));

      assertThat(values(attempt, "Fencing-Token")).containsExactly("7");
      assertThat(values(attempt, "Fencing-Lock")).containsExactly("orders");
      assertThat(values(attempt, "Fencing-Grant")).as("the old grant is not this token's").isEmpty();

      RequestHeaders.APACHE_HTTPCLIENT_5.tag(attempt, Decision.tag("orders", 8, "c2ln", "1a2b"));
      assertThat(values(attempt, "Fencing-Token")).containsExactly("8");
      assertThat(values(attempt, "Fencing-Signature")).containsExactly("c2ln");
      assertThat(values(attempt, "Fencing-Grant")).containsExactly("1a2b");
    }
  }
}
