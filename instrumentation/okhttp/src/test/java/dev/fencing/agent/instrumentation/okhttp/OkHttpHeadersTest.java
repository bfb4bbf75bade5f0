package dev.fencing.agent.instrumentation.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.RequestHeaders;
import dev.fencing.agent.instrumentation.LibraryCheck;
import java.net.URLClassLoader;
import java.nio.file.Path;
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
  private static Object call(Object target, String method, Class<?>[] types, Object... args) throws Exception {
    return target.getClass().getMethod(method, types).invoke(target, args);
  }

  private static Object headers(Object request, String name) throws Exception {
    return call(request, "headers", new Class<?>[] {String.class}, name);
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void theCopyCarriesThePairOnceAndTheCallersRequestIsUnchanged(String end) throws Throwable {
    Path dir = Path.of(System.getProperty("fencing.test.okhttp.jars"));
    try (URLClassLoader library = LibraryCheck.isolated(LibraryCheck.jars(dir, end))) {
      Object builder = library.loadClass("okhttp3.Request$Builder").getConstructor().newInstance();
      Class<?>[] pair = {String.class, String.class};
      call(builder, "url", new Class<?>[] {String.class}, "http://ledger:8080/entries");
      call(builder, "header", pair, "Fencing-Token", "6");
      call(builder, "header", pair, "Fencing-Grant", "old-grant");
      Object caller = call(builder, "build", new Class<?>[0]);

      Object copy = call(caller, "newBuilder", new Class<?>[0]);
      RequestHeaders.OKHTTP_BUILDER.tag(copy, Decision.tag("orders", 7, "c2ln", null));
      Object attempt = call(copy, "build", new Class<?>[0]);

      assertThat((List<Object>) headers(attempt, "Fencing-Token")).containsExactly("7");
      assertThat((List<Object>) headers(attempt, "Fencing-Lock")).containsExactly("orders");
      assertThat((List<Object>) headers(attempt, "Fencing-Signature")).containsExactly("c2ln");
      assertThat((List<Object>) headers(attempt, "Fencing-Grant")).as("the old grant is not this token's").isEmpty();
      assertThat((List<Object>) headers(caller, "Fencing-Token")).containsExactly("6");
    }
  }
}
