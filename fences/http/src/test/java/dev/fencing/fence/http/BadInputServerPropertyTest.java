package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * A sample of the generated malformed tokens sent over the wire to a real JDK HttpServer and a real Jetty 12, each
 * with its fence at token 50: every request gets 400 with the malformed-token problem (or 428 without a token),
 * never reaches the application, and the fence stays at 50. Values are those an HTTP client can send (visible ASCII,
 * SP, HTAB); control characters and non-ASCII digits are covered at the decision level.
 */
class BadInputServerPropertyTest {

  private static final String LOCK = "ledger";
  private static final long FENCE = 50;
  private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  private static Backend jdkBackend;
  private static Backend jettyBackend;
  private static HttpFence jdkFence;
  private static HttpFence jettyFence;
  private static FencedServer jdk;
  private static FencedServer jetty;

  @BeforeContainer
  static void startServers() throws Exception {
    jdkBackend = new Backend();
    jettyBackend = new Backend();
    jdkFence = new HttpFence(FencePolicy.forLocks(LOCK).paths("/api").build(), new InMemoryFenceStore());
    jettyFence = new HttpFence(FencePolicy.forLocks(LOCK).paths("/api").build(), new InMemoryFenceStore());
    jdk = FencedServer.jdk(jdkFence, jdkBackend);
    jetty = FencedServer.jetty(new FenceServletFilter(jettyFence), Map.of(), jettyBackend);
    for (FencedServer s : List.of(jdk, jetty)) {
      assertThat(send(s, List.of(Long.toString(FENCE))).statusCode()).isEqualTo(200);
    }
  }

  @AfterContainer
  static void stopServers() {
    if (jdk != null) {
      jdk.close();
    }
    if (jetty != null) {
      jetty.close();
    }
  }

  @Property(tries = 60)
  void jdkServerAnswers400AndTheFenceStays(@ForAll("tokenHeaders") List<String> values) throws Exception {
    check(jdk, jdkFence, jdkBackend, values);
  }

  @Property(tries = 60)
  void jettyAnswers400AndTheFenceStays(@ForAll("tokenHeaders") List<String> values) throws Exception {
    check(jetty, jettyFence, jettyBackend, values);
  }

  private static void check(FencedServer s, HttpFence fence, Backend backend, List<String> values) throws Exception {
    HttpResponse<String> r = send(s, values);
    boolean missing = values.isEmpty();
    assertThat(r.statusCode()).as("%s: %s", values, r.body()).isEqualTo(missing ? 428 : 400);
    assertThat(r.headers().firstValue(TokenHeaders.REJECTED)).hasValue(missing ? "missing-token" : "malformed-token");
    assertThat(Json.object(r.body())).containsEntry("status", missing ? 428L : 400L).containsEntry("token", null);
    assertThat(backend.entries()).as("only the first request reached the application").hasSize(1);
    assertThat(fence.store().current(LOCK)).isEqualTo(FENCE);
  }

  private static HttpResponse<String> send(FencedServer s, List<String> tokenValues) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(s.uri().resolve("/api/orders")).timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.ofString("{}")).header(TokenHeaders.LOCK, LOCK);
    for (String v : tokenValues) {
      b.header(TokenHeaders.TOKEN, v);
    }
    return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Provide
  Arbitrary<List<String>> tokenHeaders() {
    // Below Jetty's 8 KiB request header limit: a larger header is refused by the server before the fence (431).
    Arbitrary<String> one = BadTokens.sendable().filter(v -> v.length() <= 4000);
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(12, one.map(List::of)),
        net.jqwik.api.Tuple.of(2, Arbitraries.oneOf(BadTokens.validDigits(), one).list().ofMinSize(2).ofMaxSize(3)),
        net.jqwik.api.Tuple.of(1, Arbitraries.just(List.<String>of())));
  }
}
