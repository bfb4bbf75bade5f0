package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.BeforeTry;

/**
 * Bad input against the fence's decision (issue 8): generated malformed tokens, duplicated token headers, missing
 * tokens and bad lock headers each get the documented answer (400 malformed-token or unknown-lock, 428 missing-token)
 * and never move the fence, even when the bad request carries a higher token than the fence's. The real servers get a
 * sample of the same values in {@link BadInputServerPropertyTest}.
 */
class BadInputPropertyTest {

  private static final String LOCK = "ledger";
  private static final long FENCE = 50;

  private HttpFence fence;

  @BeforeTry
  void fenceAt50() {
    fence = new HttpFence(FencePolicy.forLocks(LOCK, "billing").paths("/api").build(), new InMemoryFenceStore());
    assertThat(fence.decide("POST", "/api/x", List.of(Long.toString(FENCE)), List.of(LOCK)).isAdmitted()).isTrue();
  }

  /** The parser agrees with the reference rule on any value, valid or not (differential). */
  @Property(tries = 2000)
  void theParserFollowsTheTokenRule(@ForAll("anyValue") String value) {
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

  @Property(tries = 1000)
  void aMalformedTokenGets400AndTheFenceStays(@ForAll("malformed") String value) {
    Decision d = fence.decide("POST", "/api/orders", List.of(value), List.of(LOCK));
    assertRefused(d, Rejection.MALFORMED_TOKEN, 400, LOCK);
    assertThat(d.problem().token()).isNull();
    assertThat(fence.metrics().count(LOCK, Rejection.MALFORMED_TOKEN)).isEqualTo(1);
  }

  /** Two or more token headers are malformed even when every value is valid, equal, or higher than the fence. */
  @Property(tries = 300)
  void duplicatedTokenHeadersGet400(@ForAll("duplicated") List<String> values) {
    Decision d = fence.decide("PUT", "/api/orders/1", values, List.of(LOCK));
    assertRefused(d, Rejection.MALFORMED_TOKEN, 400, LOCK);
    assertThat(d.problem().detail()).isEqualTo(values.size() + " Fencing-Token headers: send exactly one");
  }

  /** A valid, higher token with a bad lock header: 400 unknown-lock, and the higher token does not advance anything. */
  @Property(tries = 500)
  void aBadLockHeaderGets400EvenWithAHigherToken(@ForAll("badLock") List<String> lockValues,
      @ForAll("higher") long token) {
    Decision d = fence.decide("DELETE", "/api/orders/1", List.of(Long.toString(token)), lockValues);
    assertRefused(d, Rejection.UNKNOWN_LOCK, 400, null);
    assertThat(d.problem().token()).isEqualTo(token);
    assertThat(fence.store().current("billing")).isZero();
  }

  /** No token header (null or no values) with any lock header, or none: 428, fence unchanged. */
  @Property(tries = 100)
  void aMissingTokenGets428(@ForAll("anyLock") List<String> lockValues, @ForAll boolean nullList) {
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

  @Provide
  Arbitrary<String> anyValue() {
    return Arbitraries.oneOf(BadTokens.any(), BadTokens.validDigits(),
        BadTokens.validDigits().map(d -> " \t".substring(0, d.length() % 3 == 0 ? 2 : 1) + d + " "),
        Arbitraries.strings().ofMaxLength(30));
  }

  @Provide
  Arbitrary<String> malformed() {
    return BadTokens.any();
  }

  @Provide
  Arbitrary<List<String>> duplicated() {
    return Arbitraries.oneOf(BadTokens.validDigits(), Arbitraries.just(Long.toString(FENCE)),
        Arbitraries.longs().between(FENCE + 1, Long.MAX_VALUE).map(Object::toString), BadTokens.any())
        .list().ofMinSize(2).ofMaxSize(5);
  }

  @Provide
  Arbitrary<Long> higher() {
    return Arbitraries.longs().between(FENCE + 1, Long.MAX_VALUE);
  }

  /** Lock header values the fence must not take for "ledger" or "billing". */
  @Provide
  Arbitrary<List<String>> badLock() {
    Arbitrary<String> wrongName = Arbitraries.oneOf(
        Arbitraries.of("Ledger", "LEDGER", "ledger ,", "ledger,billing", "ledger, ledger", "ledger\u0000",
            "led ger", "ledger.", "\u0435ledger", "l\u0435dger", "ledger\u200b", "*", "", " ", "(unknown)"),
        Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(40)
            .filter(s -> !s.equals(LOCK) && !s.equals("billing")),
        Arbitraries.strings().ofMaxLength(20).filter(s -> !s.strip().equals(LOCK) && !s.strip().equals("billing")),
        Arbitraries.strings().withCharRange('a', 'z').ofLength(600));
    Arbitrary<List<String>> one = wrongName.map(List::of);
    Arbitrary<List<String>> several = Arbitraries.of(LOCK, "billing").list().ofMinSize(2).ofMaxSize(3);
    Arbitrary<List<String>> none = Arbitraries.of(true, false).map(isNull -> isNull ? null : List.<String>of());
    return Arbitraries.oneOf(one, several, none);
  }

  @Provide
  Arbitrary<List<String>> anyLock() {
    return Arbitraries.oneOf(badLock(), Arbitraries.just(List.of(LOCK)),
        Combinators.combine(Arbitraries.just(LOCK), Arbitraries.of(" ", "\t")).as((l, w) -> {
          List<String> out = new ArrayList<>();
          out.add(w + l + w);
          return out;
        }));
  }
}
