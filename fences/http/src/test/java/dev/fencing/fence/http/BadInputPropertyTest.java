package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.InMemoryFenceStore;
import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenHeaders;
import dev.fencing.testing.Gen;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input against the fence's decision: generated malformed tokens, duplicated token headers, missing
 * tokens and bad lock headers each get the documented answer (400 malformed-token or unknown-lock, 428 missing-token)
 * and never move the fence, even when the bad request carries a higher token than the fence's. Cases come from a
 * seeded {@link Gen} (same cases every run) plus hand-picked edge cases. The real servers get a sample of the same
 * values in {@link BadInputServerPropertyTest}.
 */
class BadInputPropertyTest {

  private static final String LOCK = "ledger";
  private static final long FENCE = 50;

  private HttpFence fence;

  @BeforeEach
  void fenceAt50() {
    fence = new HttpFence(FencePolicy.forLocks(LOCK, "billing").paths("/api").build(), new InMemoryFenceStore());
    assertThat(fence.decide("POST", "/api/x", List.of(Long.toString(FENCE)), List.of(LOCK)).isAdmitted()).isTrue();
  }

  /** The parser agrees with the reference rule on any value, valid or not (differential). */
  @ParameterizedTest(name = "{0}")
  @MethodSource("anyValue")
  void theParserFollowsTheTokenRule(String value) {
    TokenHeaders.Result r = TokenHeaders.parse(List.of(value), List.of(LOCK), Set.of(LOCK));
    Long expected = BadTokens.reference(value);
    if (expected == null) {
      assertThat(r.rejection()).as("'%s'", value).isEqualTo(Rejection.MALFORMED_TOKEN);
      assertThat(r.token()).isZero();
    } else {
      assertThat(r.isValid()).as("'%s'", value).isTrue();
      assertThat(r.token()).isEqualTo(expected);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformed")
  void aMalformedTokenGets400AndTheFenceStays(String value) {
    Decision d = fence.decide("POST", "/api/orders", List.of(value), List.of(LOCK));
    assertRefused(d, Rejection.MALFORMED_TOKEN, 400, LOCK);
    assertThat(d.problem().token()).isNull();
    assertThat(fence.metrics().count(LOCK, Rejection.MALFORMED_TOKEN)).isEqualTo(1);
  }

  /** Two or more token headers are malformed even when every value is valid, equal, or higher than the fence. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("duplicated")
  void duplicatedTokenHeadersGet400(List<String> values) {
    Decision d = fence.decide("PUT", "/api/orders/1", values, List.of(LOCK));
    assertRefused(d, Rejection.MALFORMED_TOKEN, 400, LOCK);
    assertThat(d.problem().detail()).isEqualTo(values.size() + " Fencing-Token headers: send exactly one");
  }

  /** A valid, higher token with a bad lock header: 400 unknown-lock, and the higher token does not advance anything. */
  @ParameterizedTest(name = "{0} with token {1}")
  @MethodSource("badLockWithHigherToken")
  void aBadLockHeaderGets400EvenWithAHigherToken(List<String> lockValues, long token) {
    Decision d = fence.decide("DELETE", "/api/orders/1", List.of(Long.toString(token)), lockValues);
    assertRefused(d, Rejection.UNKNOWN_LOCK, 400, null);
    assertThat(d.problem().token()).isEqualTo(token);
    assertThat(fence.store().current("billing")).isZero();
  }

  /** No token header (null or no values) with any lock header, or none: 428, fence unchanged. */
  @ParameterizedTest(name = "{0}, token list null: {1}")
  @MethodSource("anyLockWithoutToken")
  void aMissingTokenGets428(List<String> lockValues, boolean nullList) {
    Decision d = fence.decide("PATCH", "/api/orders/1", nullList ? null : List.of(), lockValues);
    assertRefused(d, Rejection.MISSING_TOKEN, 428, null);
  }

  private void assertRefused(Decision d, Rejection reason, int status, String lock) {
    assertThat(d.isRejected()).isTrue();
    assertThat(d.isAdmitted()).isFalse();
    Problem p = d.problem();
    assertThat(p.rejection()).isEqualTo(reason);
    assertThat(p.status()).isEqualTo(status);
    assertThat(p.headers()).containsEntry(TokenHeaders.REJECTED, reason.header());
    if (lock != null) {
      assertThat(p.lock()).isEqualTo(lock);
    }
    // A client's value reaches the detail only quoted: short, printable ASCII, nothing to inject into logs or JSON.
    assertThat(p.detail().length()).isLessThan(200);
    assertThat(p.detail().chars().allMatch(c -> c >= 0x20 && c < 0x7f)).as(p.detail()).isTrue();
    assertThat(Json.object(p.json())).containsEntry("status", (long) status);
    assertThat(fence.store().current(LOCK)).isEqualTo(FENCE);
    assertThat(fence.decide("POST", "/api/x", List.of(Long.toString(FENCE - 1)), List.of(LOCK)).problem().rejection())
        .as("the fence still refuses what it refused before").isEqualTo(Rejection.STALE_TOKEN);
  }

  // ------------------------------------------------------------------------------------------------ generators

  private static Stream<Arguments> named(List<?> cases) {
    return cases.stream().map(c -> Arguments.of(Named.of(Gen.show(c), c)));
  }

  static Stream<Arguments> anyValue() {
    Gen g = new Gen(8_001);
    List<String> edges = new ArrayList<>(BadTokens.EDGE_CASES);
    edges.addAll(List.of("1", "50", "9223372036854775807", " 7", "7\t", " \t7 "));
    return named(Gen.cases(2000, edges, () -> g.oneOf(() -> BadTokens.any(g), g::validDigits,
        () -> {
          String d = g.validDigits();
          return " \t".substring(0, d.length() % 3 == 0 ? 2 : 1) + d + " ";
        },
        () -> g.anyString(0, 30)), v -> true));
  }

  static Stream<Arguments> malformed() {
    Gen g = new Gen(8_002);
    return named(Gen.cases(1000, BadTokens.EDGE_CASES, () -> BadTokens.any(g), v -> BadTokens.reference(v) == null));
  }

  static Stream<Arguments> duplicated() {
    Gen g = new Gen(8_003);
    String fence = Long.toString(FENCE);
    List<List<String>> edges = List.of(List.of(fence, fence), List.of("51", "52"), List.of("1", "abc"),
        List.of(fence, fence, fence, fence, fence));
    return named(Gen.cases(300, edges, () -> g.list(2, 5, () -> g.oneOf(g::validDigits, () -> fence,
        () -> Long.toString(g.between(FENCE + 1, Long.MAX_VALUE)), () -> BadTokens.any(g))), v -> true));
  }

  /** Lock header values the fence must not take for "ledger" or "billing". */
  static List<String> badLock(Gen g) {
    return g.oneOf(
        () -> {
          String wrong = g.oneOf(
              () -> g.of("Ledger", "LEDGER", "ledger ,", "ledger,billing", "ledger, ledger", "ledger\u0000",
                  "led ger", "ledger.", "\u0435ledger", "l\u0435dger", "ledger\u200b", "*", "", " ", "(unknown)"),
              () -> {
                String s;
                do {
                  s = g.chars('!', '~', 1, 40);
                } while (s.equals(LOCK) || s.equals("billing"));
                return s;
              },
              () -> {
                String s;
                do {
                  s = g.anyString(0, 20);
                } while (s.strip().equals(LOCK) || s.strip().equals("billing"));
                return s;
              },
              () -> g.chars('a', 'z', 600, 600));
          return List.of(wrong);
        },
        () -> g.list(2, 3, () -> g.of(LOCK, "billing")),
        () -> g.bool() ? null : List.<String>of());
  }

  static Stream<Arguments> badLockWithHigherToken() {
    Gen g = new Gen(8_004);
    List<Arguments> out = new ArrayList<>();
    out.add(Arguments.of(Named.of("null", null), Long.MAX_VALUE));
    out.add(Arguments.of(Named.of("[]", List.of()), FENCE + 1));
    out.add(Arguments.of(Named.of("['Ledger']", List.of("Ledger")), FENCE + 1));
    while (out.size() < 500) {
      List<String> lock = badLock(g);
      out.add(Arguments.of(Named.of(Gen.show(lock), lock), g.between(FENCE + 1, Long.MAX_VALUE)));
    }
    return out.stream();
  }

  static Stream<Arguments> anyLockWithoutToken() {
    Gen g = new Gen(8_005);
    List<Arguments> out = new ArrayList<>();
    while (out.size() < 100) {
      List<String> lock = g.oneOf(() -> badLock(g), () -> List.of(LOCK), () -> {
        String w = g.of(" ", "\t");
        List<String> padded = new ArrayList<>();
        padded.add(w + LOCK + w);
        return padded;
      });
      out.add(Arguments.of(Named.of(Gen.show(lock), lock), g.bool()));
    }
    return out.stream();
  }
}
