package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.ProxySelector;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpRequest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The per-attempt helper of the JDK's HTTP clients on the JDK's real internal classes (sun.net.www.MessageHeader,
 * jdk.internal.net.http.HttpRequestImpl), found through the lookups the advice hands over from inside
 * sun.net.www.http.HttpClient and jdk.internal.net.http.MultiExchange (here privateLookupIn; the surefire argLine opens
 * those packages). A JDK that renames a method the helper calls fails here.
 */
class JdkHttpAttemptsTest {
  private final RecordingHttpHooks hooks = new RecordingHttpHooks();

  @AfterEach
  void uninstall() {
    RecordingHttpHooks.uninstall();
  }

  private static MethodHandles.Lookup lookupIn(String className) throws Exception {
    return MethodHandles.privateLookupIn(Class.forName(className), MethodHandles.lookup());
  }

  /** A MessageHeader as HttpURLConnection builds it: the request line first, then the headers. */
  private static Object requests(String requestLine, String... headers) throws Throwable {
    MethodHandles.Lookup lookup = lookupIn("sun.net.www.http.HttpClient");
    Class<?> type = lookup.findClass("sun.net.www.MessageHeader");
    Object requests = lookup.findConstructor(type, MethodType.methodType(void.class)).invoke();
    var add = lookup.findVirtual(type, "add", MethodType.methodType(void.class, String.class, String.class));
    add.invoke(requests, requestLine, null);
    for (int i = 0; i < headers.length; i += 2) {
      add.invoke(requests, headers[i], headers[i + 1]);
    }
    return requests;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, List<String>> headers(Object requests) throws Throwable {
    return (Map<String, List<String>>) requests.getClass().getMethod("getHeaders").invoke(requests);
  }

  @Test
  void urlConnectionAttemptsAreTaggedOnceWithTheirOwnDecision() throws Throwable {
    JdkHttpAttempts.initUrlConnection(lookupIn("sun.net.www.http.HttpClient"));
    hooks.install(Decision.tag("orders", 7, null, "1a2b"));
    Object requests = requests("POST /transfers HTTP/1.1", "X-App", "1", "Fencing-Token", "3", "fencing-token", "4");
    URL url = URI.create("http://ledger:8080/transfers").toURL();

    JdkHttpAttempts.urlConnectionAttempt(null, requests, url);
    // The same MessageHeader written again (a re-send, a 307), after a new grant: this attempt's pair, once.
    hooks.install(Decision.tag("orders", 8));
    JdkHttpAttempts.urlConnectionAttempt(null, requests, url);

    assertThat(hooks.asked).containsExactly("POST http ledger 8080", "POST http ledger 8080");
    Map<String, List<String>> h = headers(requests);
    assertThat(h.get("Fencing-Token")).containsExactly("8");
    assertThat(h.get("Fencing-Lock")).containsExactly("orders");
    assertThat(h).doesNotContainKey("Fencing-Grant").doesNotContainKey("fencing-token");
    assertThat(h.get("X-App")).containsExactly("1");
    assertThat(h).containsKey("POST /transfers HTTP/1.1"); // the request line, unchanged
  }

  @Test
  void aBlockedUrlConnectionAttemptThrowsAndWritesNothingAProxyTunnelIsLeftAlone() throws Throwable {
    JdkHttpAttempts.initUrlConnection(lookupIn("sun.net.www.http.HttpClient"));
    hooks.install(Decision.block("orders", 7, BlockReason.EXPIRED));
    Object requests = requests("PUT /x HTTP/1.1", "X-App", "1");

    assertThatThrownBy(() -> JdkHttpAttempts.urlConnectionAttempt(null, requests,
        URI.create("https://ledger/x").toURL()))
        .isInstanceOf(FencingBlockedException.class).hasMessageContaining("lock 'orders', token 7");
    Object connect = requests("CONNECT ledger:443 HTTP/1.1");
    JdkHttpAttempts.urlConnectionAttempt(null, connect, URI.create("https://ledger/x").toURL());

    assertThat(hooks.asked).containsExactly("PUT https ledger -1");
    assertThat(headers(requests)).containsOnlyKeys("PUT /x HTTP/1.1", "X-App");
  }

  @Test
  void theMethodIsTheRequestLinesFirstWord() {
    assertThat(JdkHttpAttempts.requestMethod("POST /a HTTP/1.1")).isEqualTo("POST");
    assertThat(JdkHttpAttempts.requestMethod("post http://proxy.example/a HTTP/1.1")).isEqualTo("post");
    assertThat(JdkHttpAttempts.requestMethod("garbage")).isNull();
    assertThat(JdkHttpAttempts.requestMethod(null)).isNull();
  }

  @Test
  void httpClientAttemptsGetThePairAsSystemHeaders() throws Throwable {
    MethodHandles.Lookup lookup = lookupIn("jdk.internal.net.http.MultiExchange");
    JdkHttpAttempts.initHttpClient(lookup);
    Class<?> type = lookup.findClass("jdk.internal.net.http.HttpRequestImpl");
    HttpRequest user = HttpRequest.newBuilder(URI.create("http://ledger:8080/x"))
        .POST(HttpRequest.BodyPublishers.ofString("x")).header("X-App", "1").build();
    Object request = lookup.findConstructor(type,
        MethodType.methodType(void.class, HttpRequest.class, ProxySelector.class))
        .invoke(user, ProxySelector.getDefault());
    Map<?, ?> system = (Map<?, ?>) MethodHandles.filterReturnValue(
        lookup.findVirtual(type, "getSystemHeadersBuilder",
            MethodType.methodType(lookup.findClass("jdk.internal.net.http.common.HttpHeadersBuilder"))),
        lookup.findVirtual(lookup.findClass("jdk.internal.net.http.common.HttpHeadersBuilder"), "map",
            MethodType.methodType(Map.class))).invoke(request);

    JdkHttpAttempts.setSystemHeaders(request, Decision.tag("orders", 7, null, "1a2b"));
    assertThat(system.get("Fencing-Token")).isEqualTo(List.of("7"));
    assertThat(system.get("fencing-grant")).isEqualTo(List.of("1a2b"));

    JdkHttpAttempts.setSystemHeaders(request, Decision.tag("orders", 8));
    assertThat(system.get("Fencing-Token")).isEqualTo(List.of("8"));
    assertThat(system.get("Fencing-Lock")).isEqualTo(List.of("orders"));
    assertThat(system.containsKey("Fencing-Grant")).as("no grant of an earlier attempt").isFalse();
    assertThat(((HttpRequest) request).headers().map()).containsOnlyKeys("X-App");
  }
}
