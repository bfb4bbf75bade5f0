package dev.fencing.agent.instrumentation.javahttpclient;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The hooks against the JDK HttpClient of Java 17 and Java 25 (their own java.net.http): they select HttpClientImpl,
 * finding its private sendAsync(request, handler, pushHandler, executor) (send and both public sendAsync pass through
 * it), whose advice reads HttpRequest.uri/method and copies the request with HttpRequest.newBuilder(request, filter)
 * (Java 16+), and MultiExchange, finding its private responseAsyncImpl() (each attempt of one send), whose advice reads
 * the fields attempts, max_attempts and currentreq. A JDK that renames or reshapes one of them fails here, not in
 * production; JdkHttpAttemptsTest covers the methods the advice calls.
 */
class JavaHttpClientRangeTest {
  @ParameterizedTest
  @ValueSource(strings = {"17", "25"})
  void theHooksSelectTheirJdkClassesAndTheirAdviceWeaves(String java) throws Exception {
    Map<String, Integer> advised =
        LibraryCheck.advisedInJdk(new JavaHttpClientInstrumentationModule(), LibraryCheck.testedJdk(java), "java.net.http");
    assertThat(advised).containsExactly(Map.entry("jdk.internal.net.http.HttpClientImpl", 1),
        Map.entry("jdk.internal.net.http.MultiExchange", 1));
  }
}
