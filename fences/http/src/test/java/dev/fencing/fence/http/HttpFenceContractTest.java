package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.FenceStore;
import dev.fencing.fence.store.FenceStoreException;
import dev.fencing.fence.store.InMemoryFenceStore;
import dev.fencing.fence.store.Verdict;
import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenHeaders;
import dev.fencing.protocol.TokenSignature;
import dev.fencing.testing.Gen;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The HTTP fence's contract (docs/DESIGN.md sections 4 and 5) through a real server and the JDK's HTTP client: subclasses
 * bring the server and its filter. The backend records the requests that reach it, so each test also sees what the
 * fence let through.
 */
abstract class HttpFenceContractTest {

  static final String LOCK = "ledger";

  final Backend backend = new Backend();
  final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();
  private final List<FencedServer> servers = new ArrayList<>();

  /** A server with {@code fence} in front of {@link #backend}. */
  abstract FencedServer start(HttpFence fence) throws Exception;

  /** The store the contract tests run on; the JDBC ITs bring theirs. */
  FenceStore newStore() {
    return new InMemoryFenceStore();
  }

  @AfterEach
  void stopServers() {
    for (FencedServer s : servers) {
      s.close();
    }
  }

  FencedServer serve(HttpFence fence) throws Exception {
    FencedServer s = start(fence);
    servers.add(s);
    return s;
  }

  HttpFence fence(FencePolicy.Builder policy) {
    return new HttpFence(policy.build(), newStore());
  }

  static FencePolicy.Builder policy() {
    return FencePolicy.forLocks(LOCK).paths("/api");
  }

  /** A request builder for {@code method path} with a small body, plus any headers given as name, value pairs. */
  static HttpRequest request(FencedServer s, String method, String path, String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(s.uri().resolve(path)).timeout(Duration.ofSeconds(30))
        .method(method, method.equals("GET") || method.equals("HEAD") ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString("{\"amount\":1}"));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return b.build();
  }

  HttpResponse<String> send(HttpRequest request) throws Exception {
    return client.send(request, HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> post(FencedServer s, long token, String... extraHeaders) throws Exception {
    List<String> h = new ArrayList<>(List.of(TokenHeaders.TOKEN, Long.toString(token), TokenHeaders.LOCK, LOCK));
    h.addAll(List.of(extraHeaders));
    return send(request(s, "POST", "/api/orders", h.toArray(String[]::new)));
  }

  @Test
  void acceptsTheCurrentTokenAndHigherOnes() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 5).statusCode()).isEqualTo(200);
    assertThat(post(s, 5).statusCode()).isEqualTo(200);
    assertThat(send(request(s, "PUT", "/api/orders/1", TokenHeaders.TOKEN, "7", TokenHeaders.LOCK, LOCK))
        .statusCode()).isEqualTo(200);
    assertThat(send(request(s, "PATCH", "/api/orders/1", TokenHeaders.TOKEN, "7", TokenHeaders.LOCK, LOCK))
        .statusCode()).isEqualTo(200);
    assertThat(send(request(s, "DELETE", "/api/orders/1", TokenHeaders.TOKEN, "9223372036854775807",
        TokenHeaders.LOCK, LOCK)).statusCode()).isEqualTo(200);
    assertThat(backend.entries()).extracting(Backend.Entry::token)
        .containsExactly("5", "5", "7", "7", "9223372036854775807");
    assertThat(fence.store().current(LOCK)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aLowerTokenGets409WithTheProblemAndTheFenceStays() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 7).statusCode()).isEqualTo(200);
    HttpResponse<String> r = post(s, 5);
    assertThat(r.statusCode()).isEqualTo(409);
    assertThat(r.headers().allValues("Content-Type")).containsExactly("application/problem+json");
    assertThat(r.headers().allValues(TokenHeaders.REJECTED)).containsExactly("stale-token");
    Map<String, Object> problem = Json.object(r.body());
    assertThat(problem).containsOnlyKeys("type", "title", "status", "detail", "lock", "token", "currentToken");
    assertThat(problem).containsEntry("type", "urn:fencing:problem:stale-token")
        .containsEntry("title", "Stale fencing token").containsEntry("status", 409L).containsEntry("lock", LOCK)
        .containsEntry("token", 5L).containsEntry("currentToken", 7L);
    assertThat((String) problem.get("detail"))
        .isEqualTo("token 5 for lock 'ledger' is lower than the fence token 7: a newer lock holder has been here, "
            + "this request comes from a stale one");
    assertThat(fence.store().current(LOCK)).isEqualTo(7);
    assertThat(backend.entries()).extracting(Backend.Entry::token).containsExactly("7");
    assertThat(fence.metrics().count(LOCK, Rejection.STALE_TOKEN)).isEqualTo(1);
    assertThat(fence.metrics().prometheusText())
        .contains("fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"stale_token\"} 1\n");
  }

  @Test
  void aMissingTokenOnAFencedRouteGets428() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 3).statusCode()).isEqualTo(200);
    for (HttpRequest req : List.of(request(s, "POST", "/api/orders"),
        request(s, "DELETE", "/api/orders/1", TokenHeaders.LOCK, LOCK))) {
      HttpResponse<String> r = send(req);
      assertThat(r.statusCode()).isEqualTo(428);
      assertThat(r.headers().firstValue(TokenHeaders.REJECTED)).hasValue("missing-token");
      assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      Map<String, Object> problem = Json.object(r.body());
      assertThat(problem).containsEntry("type", "urn:fencing:problem:missing-token").containsEntry("status", 428L)
          .containsEntry("token", null).containsEntry("currentToken", null);
    }
    assertThat(fence.store().current(LOCK)).isEqualTo(3);
    assertThat(backend.entries()).hasSize(1);
    assertThat(fence.metrics().count(LOCK, Rejection.MISSING_TOKEN)).isEqualTo(2);
  }

  static final String GRANT = "Fencing-Grant";

  /**
   * An etcd restored from a snapshot can give a new holder exactly the old holder's token; the grant id (the lease)
   * tells the two apart: the grant stored by the advance wins, an equal token from another grant is a replay.
   */
  @Test
  void anEqualTokenFromAnotherGrantGets409ReplayedTokenAndTheFenceStays() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(fence.metrics().prometheusText())
        .contains("fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"replayed_token\"} 0\n");
    assertThat(post(s, 7, GRANT, "694d8a3b1c2e0f11").statusCode()).isEqualTo(200);
    HttpResponse<String> r = post(s, 7, GRANT, "694d8a3b1c2e0f99");
    assertThat(r.statusCode()).isEqualTo(409);
    assertThat(r.headers().allValues(TokenHeaders.REJECTED)).containsExactly("replayed-token");
    assertThat(r.headers().allValues("Content-Type")).containsExactly("application/problem+json");
    Map<String, Object> problem = Json.object(r.body());
    assertThat(problem).containsOnlyKeys("type", "title", "status", "detail", "lock", "token", "currentToken");
    assertThat(problem).containsEntry("type", "urn:fencing:problem:replayed-token")
        .containsEntry("title", "Replayed fencing token").containsEntry("status", 409L).containsEntry("lock", LOCK)
        .containsEntry("token", 7L).containsEntry("currentToken", 7L);
    assertThat((String) problem.get("detail")).contains("token 7 for lock 'ledger' was issued to another grant");
    HttpResponse<String> none = post(s, 7);
    assertThat(none.statusCode()).as("an equal token without a grant while one is stored").isEqualTo(409);
    assertThat(none.headers().allValues(TokenHeaders.REJECTED)).containsExactly("replayed-token");
    assertThat(post(s, 7, GRANT, "694d8a3b1c2e0f11").statusCode()).as("the same grant").isEqualTo(200);
    assertThat(fence.store().current(LOCK)).isEqualTo(7);
    assertThat(backend.entries()).extracting(Backend.Entry::token).containsExactly("7", "7");
    assertThat(fence.metrics().count(LOCK, Rejection.REPLAYED_TOKEN)).isEqualTo(2);
    assertThat(fence.metrics().count(LOCK, Rejection.STALE_TOKEN)).isZero();
    assertThat(fence.metrics().prometheusText())
        .contains("fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"replayed_token\"} 2\n");

    // A higher token from the other grant advances as always, and its grant is the one that counts from then on.
    assertThat(post(s, 8, GRANT, "694d8a3b1c2e0f99").statusCode()).isEqualTo(200);
    assertThat(post(s, 8, GRANT, "694d8a3b1c2e0f11").statusCode()).isEqualTo(409);
    assertThat(post(s, 7, GRANT, "694d8a3b1c2e0f11").statusCode()).isEqualTo(409);
    assertThat(fence.store().current(LOCK)).isEqualTo(8);
  }

  @Test
  void withoutAStoredGrantEqualTokensPassAsBefore() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 7).statusCode()).isEqualTo(200);
    assertThat(post(s, 7).statusCode()).isEqualTo(200);
    assertThat(post(s, 7, GRANT, "a1").statusCode()).as("no grant stored: an equal token passes").isEqualTo(200);
    assertThat(post(s, 7, GRANT, "b2").statusCode()).as("an equal token does not store its grant").isEqualTo(200);
    assertThat(post(s, 8, GRANT, "c3").statusCode()).isEqualTo(200);
    assertThat(post(s, 9).statusCode()).as("an advance without a grant").isEqualTo(200);
    assertThat(post(s, 9, GRANT, "c3").statusCode()).as("clears the stored one").isEqualTo(200);
    assertThat(post(s, 9, GRANT, "d4").statusCode()).isEqualTo(200);
    assertThat(fence.store().current(LOCK)).isEqualTo(9);
    assertThat(fence.metrics().count(LOCK, Rejection.REPLAYED_TOKEN)).isZero();
  }

  @Test
  void aMalformedGrantGets400AndNeverMovesTheFence() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 5, GRANT, "a1").statusCode()).isEqualTo(200);
    Map<String, String[]> cases = new java.util.LinkedHashMap<>();
    cases.put("65 characters", new String[] {GRANT, "a".repeat(65)});
    cases.put("oversized header", new String[] {GRANT, "a".repeat(4000)});
    cases.put("inner blank", new String[] {GRANT, "a 1"});
    cases.put("empty", new String[] {GRANT, ""});
    cases.put("duplicated", new String[] {GRANT, "a1", GRANT, "a1"});
    for (Map.Entry<String, String[]> c : cases.entrySet()) {
      for (long token : new long[] {5, 6}) {
        HttpResponse<String> r = post(s, token, c.getValue());
        assertThat(r.statusCode()).as(c.getKey()).isEqualTo(400);
        assertThat(r.headers().firstValue(TokenHeaders.REJECTED)).as(c.getKey()).hasValue("malformed-token");
        assertThat(Json.object(r.body())).as(c.getKey()).containsEntry("type", "urn:fencing:problem:malformed-token");
        assertThat(fence.store().current(LOCK)).as(c.getKey()).isEqualTo(5);
      }
    }
    assertThat(post(s, 5, GRANT, "!~" + "x".repeat(62)).statusCode()).as("64 visible characters").isEqualTo(409);
    assertThat(post(s, 5, GRANT, " a1 ").statusCode()).as("blanks around the value are no part of it")
        .isEqualTo(200);
    assertThat(backend.entries()).extracting(Backend.Entry::token).containsExactly("5", "5");
    assertThat(fence.metrics().count(LOCK, Rejection.MALFORMED_TOKEN)).isEqualTo(2L * cases.size());
  }

  static final TokenSignature KEY = TokenSignature.of("0123456789abcdef0123456789abcdef".getBytes());

  HttpResponse<String> signedPost(FencedServer s, long token, String signature) throws Exception {
    return post(s, token, TokenHeaders.SIGNATURE, signature);
  }

  @Test
  void withASigningKeyOnlySignedTokensPassAndRefusalsNeverMoveTheFence() throws Exception {
    HttpFence fence = fence(policy().signingKey(KEY));
    FencedServer s = serve(fence);
    assertThat(signedPost(s, 10, KEY.sign(LOCK, 10)).statusCode()).isEqualTo(200);

    // Token poisoning: a huge token, unsigned or with a forged signature, never reaches the store.
    long poison = Long.MAX_VALUE;
    HttpResponse<String> unsigned = post(s, poison);
    assertThat(unsigned.statusCode()).isEqualTo(428);
    assertThat(unsigned.headers().firstValue(TokenHeaders.REJECTED)).hasValue("missing-signature");
    assertThat(Json.object(unsigned.body())).containsEntry("type", "urn:fencing:problem:missing-signature")
        .containsEntry("status", 428L).containsEntry("token", poison).containsEntry("currentToken", null);
    HttpResponse<String> forged = signedPost(s, poison, KEY.sign(LOCK, 10)); // a real signature, of another token
    assertThat(forged.statusCode()).isEqualTo(403);
    assertThat(forged.headers().firstValue(TokenHeaders.REJECTED)).hasValue("bad-signature");
    assertThat(forged.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(Json.object(forged.body())).containsEntry("type", "urn:fencing:problem:bad-signature")
        .containsEntry("title", "Invalid fencing signature").containsEntry("status", 403L)
        .containsEntry("lock", LOCK).containsEntry("token", poison);
    TokenSignature otherKey = TokenSignature.of("another key, another key, another".getBytes());
    assertThat(signedPost(s, poison, otherKey.sign(LOCK, poison)).statusCode()).isEqualTo(403);
    assertThat(send(request(s, "POST", "/api/orders", TokenHeaders.TOKEN, "11", TokenHeaders.LOCK, LOCK,
        TokenHeaders.SIGNATURE, KEY.sign(LOCK, 11), TokenHeaders.SIGNATURE, KEY.sign(LOCK, 11))).statusCode())
        .as("two signature headers").isEqualTo(403);

    // Seeded malformed signatures: each one 403 bad-signature, the fence stays at 10.
    Gen gen = new Gen(20261130L);
    String good = KEY.sign(LOCK, 12);
    int cases = 0;
    for (int i = 0; i < 40; i++) {
      String bad = gen.oneOf(
          () -> good.substring(0, gen.between(1, 42)),
          () -> good + "=",
          () -> good.substring(0, 42) + (good.charAt(42) == 'A' ? 'B' : 'A'),
          () -> gen.chars('!', '~', 43, 43).replace(',', '.'),
          () -> gen.chars('A', 'Z', 44, 200),
          () -> good.replace('-', '+').replace('_', '/') + (good.contains("-") || good.contains("_") ? "" : "+"));
      if (bad.equals(good) || bad.isBlank()) {
        continue;
      }
      cases++;
      HttpResponse<String> r;
      try {
        r = signedPost(s, 12, bad);
      } catch (java.io.IOException e) {
        throw new AssertionError("signature '" + bad + "' (" + bad.length() + " chars)", e);
      }
      assertThat(r.statusCode()).as("signature '%s'", bad).isEqualTo(403);
      assertThat(r.headers().firstValue(TokenHeaders.REJECTED)).as(bad).hasValue("bad-signature");
      assertThat(fence.store().current(LOCK)).as(bad).isEqualTo(10);
    }
    assertThat(backend.entries()).extracting(Backend.Entry::token).containsExactly("10");
    assertThat(fence.store().current(LOCK)).isEqualTo(10);
    assertThat(fence.metrics().count(LOCK, Rejection.MISSING_SIGNATURE)).isEqualTo(1);
    assertThat(fence.metrics().count(LOCK, Rejection.BAD_SIGNATURE)).isEqualTo(3 + cases);
    assertThat(fence.metrics().prometheusText())
        .contains("fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"bad_signature\"} "
            + (3 + cases) + "\n");

    // The legitimate holder's signed writes still go through, and a signed stale token is still a 409.
    assertThat(signedPost(s, 12, good).statusCode()).isEqualTo(200);
    assertThat(signedPost(s, 11, KEY.sign(LOCK, 11)).statusCode()).isEqualTo(409);
    assertThat(fence.store().current(LOCK)).isEqualTo(12);
  }

  /**
   * A refused request's body may arrive after the refusal was decided (the JDK client writes headers and body
   * separately). The connection must stay usable, or be announced closed: a client that pools it and finds it
   * silently closed fails its next POST with an EOF instead of an answer.
   */
  @Test
  void aRefusalLeavesTheConnectionUsableWhenTheBodyArrivesLate() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 5).statusCode()).isEqualTo(200);
    try (java.net.Socket socket = new java.net.Socket(s.uri().getHost(), s.uri().getPort())) {
      socket.setSoTimeout(10_000);
      java.io.OutputStream out = socket.getOutputStream();
      java.io.BufferedInputStream in = new java.io.BufferedInputStream(socket.getInputStream());
      String body = "{\"amount\":1}";
      out.write(rawPost(s, 3, body.length()).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      out.flush();
      Thread.sleep(300); // the fence refuses token 3 from the headers alone
      out.write(body.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      out.flush();
      RawResponse refused = RawResponse.read(in);
      assertThat(refused.status()).isEqualTo(409);
      if (refused.closes()) {
        return; // announced: a client opens a new connection for its next request
      }
      out.write((rawPost(s, 5, body.length()) + body).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      out.flush();
      assertThat(RawResponse.read(in).status()).as("the next request on the same connection").isEqualTo(200);
    }
    assertThat(backend.entries()).extracting(Backend.Entry::token).containsExactly("5", "5");
    assertThat(fence.store().current(LOCK)).isEqualTo(5);
  }

  static String rawPost(FencedServer s, long token, int length) {
    return "POST /api/orders HTTP/1.1\r\nHost: " + s.uri().getHost() + ":" + s.uri().getPort() + "\r\n"
        + TokenHeaders.TOKEN + ": " + token + "\r\n" + TokenHeaders.LOCK + ": " + LOCK + "\r\n"
        + "Content-Type: application/json\r\nContent-Length: " + length + "\r\n\r\n";
  }

  /** An HTTP/1.1 response read off a raw socket: its status and whether it announces the connection's close. */
  record RawResponse(int status, boolean closes) {
    static RawResponse read(java.io.InputStream in) throws java.io.IOException {
      String statusLine = line(in);
      if (statusLine == null) {
        throw new java.io.EOFException("the server closed the connection without answering");
      }
      int length = 0;
      boolean closes = false;
      for (String h; (h = line(in)) != null && !h.isEmpty(); ) {
        String name = h.substring(0, h.indexOf(':')).strip();
        String value = h.substring(h.indexOf(':') + 1).strip();
        if (name.equalsIgnoreCase("Content-Length")) {
          length = Integer.parseInt(value);
        } else if (name.equalsIgnoreCase("Connection")) {
          closes = value.equalsIgnoreCase("close");
        }
      }
      in.readNBytes(length);
      return new RawResponse(Integer.parseInt(statusLine.split(" ")[1]), closes);
    }

    private static String line(java.io.InputStream in) throws java.io.IOException {
      StringBuilder b = new StringBuilder();
      for (int c; (c = in.read()) != -1; ) {
        if (c == '\n') {
          return b.toString().strip();
        }
        b.append((char) c);
      }
      return b.length() == 0 ? null : b.toString();
    }
  }

  @Test
  void withoutASigningKeySignaturesAreIgnored() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 5).statusCode()).isEqualTo(200);
    assertThat(signedPost(s, 6, "not a signature").statusCode()).isEqualTo(200);
    assertThat(fence.store().current(LOCK)).isEqualTo(6);
  }

  @Test
  void malformedHeadersGet400AndNeverMoveTheFence() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 50).statusCode()).isEqualTo(200);
    String t = TokenHeaders.TOKEN;
    String l = TokenHeaders.LOCK;
    Map<String, String[]> cases = new java.util.LinkedHashMap<>();
    cases.put("non-numeric", new String[] {t, "abc", l, LOCK});
    cases.put("hex", new String[] {t, "0x40", l, LOCK});
    cases.put("decimal point", new String[] {t, "60.0", l, LOCK});
    cases.put("negative", new String[] {t, "-60", l, LOCK});
    cases.put("signed", new String[] {t, "+60", l, LOCK});
    cases.put("zero", new String[] {t, "0", l, LOCK});
    cases.put("leading zero", new String[] {t, "060", l, LOCK});
    cases.put("above int64", new String[] {t, "9223372036854775808", l, LOCK});
    cases.put("oversized", new String[] {t, "9".repeat(40), l, LOCK});
    cases.put("oversized header", new String[] {t, "9".repeat(4000), l, LOCK});
    cases.put("empty", new String[] {t, "", l, LOCK});
    cases.put("whitespace only", new String[] {t, "   ", l, LOCK});
    cases.put("inner whitespace", new String[] {t, "6 0", l, LOCK});
    cases.put("duplicated", new String[] {t, "60", t, "70", l, LOCK});
    cases.put("duplicated equal", new String[] {t, "60", t, "60", l, LOCK});
    cases.put("comma-joined", new String[] {t, "60, 70", l, LOCK});
    cases.put("no lock", new String[] {t, "60"});
    cases.put("other lock", new String[] {t, "60", l, "billing"});
    cases.put("duplicated lock", new String[] {t, "60", l, LOCK, l, LOCK});
    SoftAssertions soft = new SoftAssertions();
    for (Map.Entry<String, String[]> c : cases.entrySet()) {
      HttpResponse<String> r = send(request(s, "POST", "/api/orders", c.getValue()));
      soft.assertThat(r.statusCode()).as(c.getKey() + ": " + r.body()).isEqualTo(400);
      soft.assertThat(r.headers().firstValue("Content-Type")).as(c.getKey()).hasValue("application/problem+json");
      boolean lockCase = c.getKey().contains("lock");
      soft.assertThat(r.headers().firstValue(TokenHeaders.REJECTED)).as(c.getKey())
          .hasValue(lockCase ? "unknown-lock" : "malformed-token");
      Map<String, Object> problem = Json.object(r.body());
      soft.assertThat(problem).as(c.getKey()).containsOnlyKeys("type", "title", "status", "detail", "lock", "token",
          "currentToken");
      soft.assertThat(problem.get("status")).as(c.getKey()).isEqualTo(400L);
      soft.assertThat(problem.get("token")).as(c.getKey()).isEqualTo(lockCase ? 60L : null);
      soft.assertThat(((String) problem.get("detail")).length()).as(c.getKey()).isLessThan(200);
      soft.assertThat(fence.store().current(LOCK)).as(c.getKey()).isEqualTo(50);
    }
    soft.assertAll();
    assertThat(backend.entries()).hasSize(1);
    assertThat(post(s, 50).statusCode()).isEqualTo(200);
    assertThat(post(s, 49).statusCode()).isEqualTo(409);
    assertThat(fence.metrics().count(LOCK, Rejection.MALFORMED_TOKEN)).isEqualTo(cases.size() - 3);
    assertThat(fence.metrics().count(LOCK, Rejection.UNKNOWN_LOCK)).isEqualTo(3);
  }

  @Test
  void safeMethodsAndUnfencedPathsPassUntouched() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 10).statusCode()).isEqualTo(200);
    assertThat(send(request(s, "GET", "/api/orders")).statusCode()).isEqualTo(200);
    assertThat(send(request(s, "GET", "/api/orders", TokenHeaders.TOKEN, "3", TokenHeaders.LOCK, LOCK))
        .statusCode()).isEqualTo(200);
    assertThat(send(request(s, "HEAD", "/api/orders", TokenHeaders.TOKEN, "junk")).statusCode()).isEqualTo(200);
    assertThat(send(request(s, "OPTIONS", "/api/orders")).statusCode()).isEqualTo(200);
    assertThat(send(request(s, "POST", "/public/orders")).statusCode()).isEqualTo(200);
    assertThat(send(request(s, "POST", "/apiary", TokenHeaders.TOKEN, "1", TokenHeaders.LOCK, LOCK)).statusCode())
        .isEqualTo(200);
    assertThat(send(request(s, "POST", "/public/../api/orders")).statusCode()).isEqualTo(428);
    assertThat(fence.store().current(LOCK)).isEqualTo(10);
    assertThat(backend.entries()).hasSize(7);
    assertThat(fence.metrics().samples()).filteredOn(x -> x.reason().equals("missing_token"))
        .extracting(FenceMetrics.Sample::value).containsExactly(1L);
  }

  @Test
  void permissiveModeLetsMissingTokensThroughButNotMalformedOrStaleOnes() throws Exception {
    HttpFence fence = fence(policy().permissive(true));
    FencedServer s = serve(fence);
    assertThat(send(request(s, "POST", "/api/orders")).statusCode()).isEqualTo(200);
    assertThat(post(s, 8).statusCode()).isEqualTo(200);
    assertThat(send(request(s, "POST", "/api/orders")).statusCode()).isEqualTo(200);
    assertThat(send(request(s, "POST", "/api/orders", TokenHeaders.TOKEN, "x", TokenHeaders.LOCK, LOCK))
        .statusCode()).isEqualTo(400);
    assertThat(post(s, 7).statusCode()).isEqualTo(409);
    assertThat(fence.store().current(LOCK)).isEqualTo(8);
  }

  @Test
  void strictModeNeedsANewTokenForEachRequest() throws Exception {
    HttpFence fence = fence(policy().strict(true));
    FencedServer s = serve(fence);
    assertThat(post(s, 5).statusCode()).isEqualTo(200);
    HttpResponse<String> again = post(s, 5);
    assertThat(again.statusCode()).isEqualTo(409);
    assertThat(Json.object(again.body())).containsEntry("currentToken", 5L);
    assertThat((String) Json.object(again.body()).get("detail")).contains("strict mode");
    assertThat(post(s, 6).statusCode()).isEqualTo(200);
    assertThat(post(s, 5).statusCode()).isEqualTo(409);
  }

  @Test
  void requestsWithTheSameTokenRunTogether() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 4).statusCode()).isEqualTo(200);
    int n = 8;
    backend.barrier(n);
    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      all.add(client.sendAsync(request(s, "POST", "/api/orders", TokenHeaders.TOKEN, "4", TokenHeaders.LOCK, LOCK,
          Backend.BARRIER, "1"), HttpResponse.BodyHandlers.ofString()));
    }
    // Each handler waits at a barrier for all 8: they only get there if the fence lets them run at the same time.
    for (CompletableFuture<HttpResponse<String>> f : all) {
      assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
  }

  @Test
  void aHigherTokenWaitsForRequestsWithTheOldOneAndLowerTokensAreRefusedAtOnce() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    CompletableFuture<HttpResponse<String>> old = client.sendAsync(request(s, "POST", "/api/orders",
        TokenHeaders.TOKEN, "5", TokenHeaders.LOCK, LOCK, Backend.HOLD, "old"), HttpResponse.BodyHandlers.ofString());
    assertThat(backend.awaitArrival("old", 10_000)).isTrue();
    CompletableFuture<HttpResponse<String>> next = client.sendAsync(request(s, "POST", "/api/orders",
        TokenHeaders.TOKEN, "6", TokenHeaders.LOCK, LOCK), HttpResponse.BodyHandlers.ofString());
    waitUntil(() -> fence.store().current(LOCK) == 6);
    HttpResponse<String> late = post(s, 5);
    assertThat(late.statusCode()).isEqualTo(409);
    assertThat(Json.object(late.body())).containsEntry("currentToken", 6L);
    Thread.sleep(300);
    assertThat(next).isNotDone();
    assertThat(backend.entries()).extracting(Backend.Entry::token).containsExactly("5");
    backend.release("old");
    assertThat(old.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(next.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(backend.entries()).extracting(Backend.Entry::token).containsExactly("5", "6");
  }

  @Test
  void aHigherTokenThatWaitsTooLongGets503AndLeavesTheFenceAdvanced() throws Exception {
    HttpFence fence = fence(policy().drainTimeout(Duration.ofMillis(300)));
    FencedServer s = serve(fence);
    CompletableFuture<HttpResponse<String>> old = client.sendAsync(request(s, "POST", "/api/orders",
        TokenHeaders.TOKEN, "5", TokenHeaders.LOCK, LOCK, Backend.HOLD, "stuck"), HttpResponse.BodyHandlers.ofString());
    assertThat(backend.awaitArrival("stuck", 10_000)).isTrue();
    HttpResponse<String> r = post(s, 6);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(r.headers().firstValue(TokenHeaders.REJECTED)).isEmpty();
    assertThat(Json.object(r.body())).containsEntry("type", "urn:fencing:problem:drain-timeout");
    assertThat(fence.metrics().count(LOCK, Rejection.DRAIN_TIMEOUT)).isEqualTo(1);
    backend.release("stuck");
    assertThat(old.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(post(s, 6).statusCode()).isEqualTo(200);
    assertThat(post(s, 5).statusCode()).isEqualTo(409);
  }

  @Test
  void aFailingStoreRefusesWith503() throws Exception {
    FenceStore broken = new FenceStore() {
      @Override
      public Verdict check(String lock, long token, boolean strict) {
        throw new FenceStoreException("database down", null);
      }

      @Override
      public long current(String lock) {
        return 0;
      }
    };
    HttpFence fence = new HttpFence(policy().build(), broken);
    FencedServer s = serve(fence);
    HttpResponse<String> r = post(s, 1);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(Json.object(r.body())).containsEntry("type", "urn:fencing:problem:store-unavailable")
        .containsEntry("token", 1L);
    assertThat(r.body()).doesNotContain("database down");
    assertThat(backend.entries()).isEmpty();
    assertThat(fence.metrics().count(LOCK, Rejection.STORE_UNAVAILABLE)).isEqualTo(1);
  }

  /**
   * 64 threads send rounds of requests with random tokens from a narrow window that moves up with each request, so
   * that same, higher and lower tokens overlap all the time; handlers record the order in which they start (under the
   * fence). Checker: in that order no token is lower than one before it.
   */
  @Test
  void concurrentRequestsWithMixedTokensNeverAcceptALowerTokenAfterAHigherOne() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    int threads = 64;
    int rounds = 4;
    int perRound = 6;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CyclicBarrier start = new CyclicBarrier(threads);
    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    AtomicInteger accepted = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    long began = System.nanoTime();
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        futures.add(pool.submit(() -> {
          ThreadLocalRandom random = ThreadLocalRandom.current();
          for (int round = 0; round < rounds; round++) {
            start.await(30, TimeUnit.SECONDS);
            for (int i = 0; i < perRound; i++) {
              long token = 1 + round * perRound + i + random.nextInt(3);
              HttpResponse<String> r = send(request(s, "POST", "/api/orders", TokenHeaders.TOKEN,
                  Long.toString(token), TokenHeaders.LOCK, LOCK, Backend.SLEEP_MICROS,
                  Integer.toString(random.nextInt(400))));
              if (r.statusCode() == 200) {
                accepted.incrementAndGet();
              } else if (r.statusCode() == 409) {
                refused.incrementAndGet();
                Object current = Json.object(r.body()).get("currentToken");
                if (!(current instanceof Long) || (Long) current <= token) {
                  problems.add("409 for " + token + " with currentToken " + current);
                }
              } else {
                problems.add(r.statusCode() + " for " + token + ": " + r.body());
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get(5, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    List<Backend.Entry> history = backend.entries();
    long highest = 0;
    for (Backend.Entry e : history) {
      long token = Long.parseLong(e.token());
      if (token < highest) {
        problems.add("token " + token + " accepted (handler #" + e.seq() + ") after token " + highest);
      }
      highest = Math.max(highest, token);
    }
    System.out.printf("[concurrency] %s: %d requests, %d accepted, %d refused as stale, %d ms%n",
        getClass().getSimpleName(), threads * rounds * perRound, accepted.get(), refused.get(),
        (System.nanoTime() - began) / 1_000_000);
    assertThat(problems).isEmpty();
    assertThat(history).hasSize(accepted.get());
    assertThat(accepted.get() + refused.get()).isEqualTo(threads * rounds * perRound);
    assertThat(refused.get()).isPositive();
    assertThat(fence.store().current(LOCK)).isEqualTo(highest);
    assertThat(fence.metrics().count(LOCK, Rejection.STALE_TOKEN)).isEqualTo(refused.get());
  }

  static void waitUntil(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 10 s");
      }
      Thread.sleep(5);
    }
  }
}
