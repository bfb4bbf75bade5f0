package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.InMemoryFenceStore;
import dev.fencing.protocol.TokenHeaders;
import dev.fencing.testing.Gen;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A sample of the generated malformed tokens sent over the wire to a real JDK HttpServer and a real Jetty 12, each
 * with its fence at token 50: every request gets 400 with the malformed-token problem (or 428 without a token),
 * never reaches the application, and the fence stays at 50. Values are those an HTTP client can send (visible ASCII,
 * SP, HTAB); control characters and non-ASCII digits are covered at the decision level. 60 seeded cases per server.
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

  @BeforeAll
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

  @AfterAll
  static void stopServers() {
    if (jdk != null) {
      jdk.close();
    }
    if (jetty != null) {
      jetty.close();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tokenHeaders")
  void jdkServerAnswers400AndTheFenceStays(List<String> values) throws Exception {
    check(jdk, jdkFence, jdkBackend, values);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tokenHeaders")
  void jettyAnswers400AndTheFenceStays(List<String> values) throws Exception {
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

  /** 12 parts one bad value, 2 parts several headers (valid or not), 1 part no token header. */
  static Stream<Arguments> tokenHeaders() {
    Gen g = new Gen(8_010);
    List<List<String>> cases = new ArrayList<>(List.of(List.of("0"), List.of("9223372036854775808"),
        List.of("50", "50"), List.of()));
    while (cases.size() < 60) {
      int pick = g.between(1, 15);
      if (pick <= 12) {
        cases.add(List.of(sendable(g)));
      } else if (pick <= 14) {
        cases.add(g.list(2, 3, () -> g.bool() ? g.validDigits() : sendable(g)));
      } else {
        cases.add(List.of());
      }
    }
    return cases.stream().map(c -> Arguments.of(Named.of(Gen.show(c), c)));
  }

  /** Below Jetty's 8 KiB request header limit: a larger header is refused by the server before the fence (431). */
  private static String sendable(Gen g) {
    String v;
    do {
      v = BadTokens.sendable(g);
    } while (v.length() > 4000);
    return v;
  }
}
