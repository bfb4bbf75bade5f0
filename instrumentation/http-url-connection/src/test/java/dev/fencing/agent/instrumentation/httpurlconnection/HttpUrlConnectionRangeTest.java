package dev.fencing.agent.instrumentation.httpurlconnection;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The hooks against java.base of Java 17 and Java 25: the connection class of the JDK's http(s) implementation,
 * sun.net.www.http.HttpClient, gets writeRequests(MessageHeader, PosterOutputStream) (where each attempt's request
 * leaves), java.net.HttpURLConnection getResponseCode (where a 409 is read), and every advice weaves, including the
 * reads of the fields url (sun.net.www.http.HttpClient) and responseCode (java.net.HttpURLConnection). A JDK that
 * renames one of them fails here, not in production; JdkHttpAttemptsTest covers the methods the advice calls.
 */
class HttpUrlConnectionRangeTest {
  @ParameterizedTest
  @ValueSource(strings = {"17", "25"})
  void theHooksSelectTheirJdkClassesAndTheirAdviceWeaves(String java) throws Exception {
    Map<String, Integer> advised =
        LibraryCheck.advisedInJdk(new HttpUrlConnectionInstrumentationModule(), LibraryCheck.testedJdk(java), "java.base");
    assertThat(advised).containsExactly(Map.entry("java.net.HttpURLConnection", 1),
        Map.entry("sun.net.www.http.HttpClient", 1));
  }
}
