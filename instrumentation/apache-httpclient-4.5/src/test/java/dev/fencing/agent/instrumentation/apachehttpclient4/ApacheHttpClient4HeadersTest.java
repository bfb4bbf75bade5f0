package dev.fencing.agent.instrumentation.apachehttpclient4;

import static dev.fencing.agent.instrumentation.LibraryCheck.invoke;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.RequestHeaders;
import dev.fencing.agent.instrumentation.LibraryCheck;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The header writes of {@link ClientExecAdvice} ({@link RequestHeaders#APACHE_HTTPCLIENT_4}) on the real classes of
 * the oldest (4.5) and the latest (4.5.14) supported HttpClient: the exec chain's HttpRequestWrapper of a caller's
 * request that already carries an old pair gets each header exactly once, a grant only when the decision has one,
 * and the caller's request keeps what it had.
 */
class ApacheHttpClient4HeadersTest {
  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void theWrapperCarriesThePairOnceAndTheCallersRequestIsUnchanged(String end) throws Throwable {
    try (URLClassLoader library = LibraryCheck.isolated(LibraryCheck.versionJars("httpclient4", end))) {
      Object caller = library.loadClass("org.apache.http.client.methods.HttpPost").getConstructor(String.class)
          .newInstance("http://ledger:8080/entries");
      invoke(caller, "addHeader", "Fencing-Token", "6");
      invoke(caller, "addHeader", "Fencing-Grant", "old-grant");
      Object attempt = library.loadClass("org.apache.http.client.methods.HttpRequestWrapper")
          .getMethod("wrap", library.loadClass("org.apache.http.HttpRequest")).invoke(null, caller);

      RequestHeaders.APACHE_HTTPCLIENT_4.tag(attempt, Decision.tag("orders", 7, "c2ln", null));

      assertThat(values(attempt, "Fencing-Token")).containsExactly("7");
      assertThat(values(attempt, "Fencing-Lock")).containsExactly("orders");
      assertThat(values(attempt, "Fencing-Signature")).containsExactly("c2ln");
      assertThat(values(attempt, "Fencing-Grant")).as("the old grant is not this token's").isEmpty();
      assertThat(values(caller, "Fencing-Token")).containsExactly("6");

      RequestHeaders.APACHE_HTTPCLIENT_4.tag(attempt, Decision.tag("orders", 8, null, "1a2b")); // a retry
      assertThat(values(attempt, "Fencing-Token")).containsExactly("8");
      assertThat(values(attempt, "Fencing-Grant")).containsExactly("1a2b");
    }
  }

  private static List<Object> values(Object message, String name) throws Exception {
    List<Object> values = new ArrayList<>();
    for (Object header : (Object[]) invoke(message, "getHeaders", name)) {
      values.add(invoke(header, "getValue"));
    }
    return values;
  }
}
