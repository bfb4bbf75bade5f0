package dev.fencing.agent.instrumentation.okhttp;

import static dev.fencing.agent.instrumentation.LibraryCheck.invoke;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.RequestHeaders;
import dev.fencing.agent.instrumentation.LibraryCheck;
import java.net.URLClassLoader;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The header writes of {@link ProceedAdvice} ({@link RequestHeaders#OKHTTP_BUILDER}) on the real classes of the oldest
 * (4.0.0) and the latest (5.5.1) supported OkHttp: the copy of a request that already carries an old pair (a retry,
 * a redirect) gets each header exactly once, a grant only when the decision has one, and the caller's request keeps
 * what it had.
 */
class OkHttpHeadersTest {
  @SuppressWarnings("unchecked")
  private static List<Object> headers(Object request, String name) throws Exception {
    return (List<Object>) invoke(request, "headers", name);
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void theCopyCarriesThePairOnceAndTheCallersRequestIsUnchanged(String end) throws Throwable {
    try (URLClassLoader library = LibraryCheck.isolated(LibraryCheck.versionJars("okhttp", end))) {
      Object builder = library.loadClass("okhttp3.Request$Builder").getConstructor().newInstance();
      invoke(builder, "url", "http://ledger:8080/entries");
      invoke(builder, "header", "Fencing-Token", "6");
      invoke(builder, "header", "Fencing-Grant", "old-grant");
      Object caller = invoke(builder, "build");

      Object copy = invoke(caller, "newBuilder");
      RequestHeaders.OKHTTP_BUILDER.tag(copy, Decision.tag("orders", 7, "c2ln", null));
      Object attempt = invoke(copy, "build");

      assertThat(headers(attempt, "Fencing-Token")).containsExactly("7");
      assertThat(headers(attempt, "Fencing-Lock")).containsExactly("orders");
      assertThat(headers(attempt, "Fencing-Signature")).containsExactly("c2ln");
      assertThat(headers(attempt, "Fencing-Grant")).as("the old grant is not this token's").isEmpty();
      assertThat(headers(caller, "Fencing-Token")).containsExactly("6");
    }
  }
}
