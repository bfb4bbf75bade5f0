package dev.fencing.agent.instrumentation.apachehttpclient5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.RequestHeaders;
import dev.fencing.agent.instrumentation.LibraryCheck;
import java.lang.reflect.Array;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
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
  private static Object call(Object target, String method, Class<?>[] types, Object... args) throws Exception {
    return target.getClass().getMethod(method, types).invoke(target, args);
  }

  private static List<String> values(Object message, String name) throws Exception {
    Object headers = call(message, "getHeaders", new Class<?>[] {String.class}, name);
    List<String> values = new ArrayList<>();
    for (int i = 0; i < Array.getLength(headers); i++) {
      values.add((String) call(Array.get(headers, i), "getValue", new Class<?>[0]));
    }
    return values;
  }

  @ParameterizedTest
  @CsvSource({"oldest, BasicClassicHttpRequest", "latest, BasicClassicHttpRequest", "oldest, BasicHttpRequest",
      "latest, BasicHttpRequest"})
  void theAttemptCarriesThePairOnce(String end, String requestType) throws Throwable {
    Path dir = Path.of(System.getProperty("fencing.test.httpclient5.jars"));
    try (URLClassLoader library = LibraryCheck.isolated(LibraryCheck.jars(dir, end))) {
      Object attempt = library.loadClass("org.apache.hc.core5.http.message." + requestType)
          .getConstructor(String.class, String.class).newInstance("PUT", "/entries/1");
      Class<?>[] pair = {String.class, Object.class};
      call(attempt, "addHeader", pair, "Fencing-Token", "6");
      call(attempt, "addHeader", pair, "Fencing-Grant", "old-grant");

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
