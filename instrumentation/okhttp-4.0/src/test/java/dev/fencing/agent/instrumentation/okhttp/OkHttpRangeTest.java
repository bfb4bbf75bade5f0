package dev.fencing.agent.instrumentation.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The hook against the real jars of the oldest (4.0.0) and the latest (5.5.1) supported OkHttp: it selects
 * RealInterceptorChain alone, advises one method there, and its advice (which reads the private fields
 * {@code interceptors} and {@code index}) weaves into it. A release that renames them fails here, not in production.
 */
class OkHttpRangeTest {
  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void theHookSelectsRealInterceptorChainAndItsAdviceWeaves(String end) throws Exception {
    List<Path> jars = LibraryCheck.versionJars("okhttp", end);
    assertThat(LibraryCheck.advised(new OkHttpInstrumentationModule(), jars))
        .containsExactly(java.util.Map.entry("okhttp3.internal.http.RealInterceptorChain", 1));
  }
}
