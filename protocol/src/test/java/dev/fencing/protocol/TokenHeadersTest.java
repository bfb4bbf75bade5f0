package dev.fencing.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TokenHeadersTest {

  private static final Set<String> LOCKS = Set.of("ledger", "billing");

  private static TokenHeaders.Result parse(List<String> tokens, String... locks) {
    return TokenHeaders.parse(tokens, locks.length == 0 ? null : Arrays.asList(locks), LOCKS);
  }

  @Test
  void readsOneTokenAndOneGuardedLock() {
    TokenHeaders.Result r = parse(List.of("42"), "ledger");
    assertThat(r.isValid()).isTrue();
    assertThat(r.lock()).isEqualTo("ledger");
    assertThat(r.token()).isEqualTo(42);
    assertThat(parse(List.of(" 9223372036854775807\t"), "billing").token()).isEqualTo(Long.MAX_VALUE);
    assertThat(parse(List.of("1"), "ledger").token()).isEqualTo(1);
  }

  @Test
  void noTokenHeaderIsMissing() {
    assertThat(parse(null, "ledger").rejection()).isEqualTo(Rejection.MISSING_TOKEN);
    assertThat(parse(List.of(), "ledger").lock()).isEqualTo("ledger");
    assertThat(parse(null).rejection()).isEqualTo(Rejection.MISSING_TOKEN);
  }

  @ParameterizedTest(name = "[{0}] -> {1}")
  @CsvSource(delimiter = '|', value = {
      "abc|non-numeric token 'abc'",
      "12a|non-numeric token '12a'",
      "1 2|non-numeric token '1 2'",
      "-5|negative token '-5'",
      "+5|signed token '+5'",
      "0|token 0: tokens start at 1",
      "000|token 0: tokens start at 1",
      "007|leading zero in token '007'",
      "9223372036854775808|token 9223372036854775808 is above 9223372036854775807",
      "99999999999999999999|oversized token '99999999999999999999': more than 19 digits",
      "5,6|several tokens in one Fencing-Token header '5,6'",
      "5, 5|several tokens in one Fencing-Token header '5, 5'",
      "'   '|empty Fencing-Token header",
      "''|empty Fencing-Token header",
      "١٢|non-numeric token '??'",
  })
  void malformedTokens(String value, String detail) {
    TokenHeaders.Result r = parse(List.of(value), "ledger");
    assertThat(r.rejection()).isEqualTo(Rejection.MALFORMED_TOKEN);
    assertThat(r.detail()).startsWith(detail);
    assertThat(r.lock()).isEqualTo("ledger");
  }

  @Test
  void oversizedHeaderIsNotEchoed() {
    TokenHeaders.Result r = parse(List.of("7".repeat(5000)), "ledger");
    assertThat(r.rejection()).isEqualTo(Rejection.MALFORMED_TOKEN);
    assertThat(r.detail()).isEqualTo("oversized Fencing-Token header (5000 characters): a token has at most 19 digits");
  }

  @Test
  void duplicatedHeadersAreMalformedEvenWhenEqual() {
    assertThat(parse(List.of("5", "6"), "ledger").detail()).isEqualTo("2 Fencing-Token headers: send exactly one");
    assertThat(parse(List.of("5", "5"), "ledger").rejection()).isEqualTo(Rejection.MALFORMED_TOKEN);
  }

  @Test
  void lockMustBeOneGuardedLock() {
    assertThat(parse(List.of("5")).rejection()).isEqualTo(Rejection.UNKNOWN_LOCK);
    assertThat(parse(List.of("5")).detail()).startsWith("no Fencing-Lock header");
    TokenHeaders.Result other = parse(List.of("5"), "orders\n");
    assertThat(other.rejection()).isEqualTo(Rejection.UNKNOWN_LOCK);
    assertThat(other.detail()).startsWith("lock 'orders?' is not fenced here");
    assertThat(other.token()).isEqualTo(5);
    assertThat(other.lock()).isNull();
    assertThat(parse(List.of("5"), "ledger", "ledger").detail()).isEqualTo("2 Fencing-Lock headers: send exactly one");
    assertThat(parse(List.of("5"), "ledger,billing").detail()).startsWith("several locks in one Fencing-Lock header");
    assertThat(parse(List.of("5"), "Ledger").rejection()).isEqualTo(Rejection.UNKNOWN_LOCK);
  }

  @Test
  void quotesAreShortAndPrintable() {
    assertThat(TokenHeaders.quote("a\u0000b")).isEqualTo("'a?b'");
    assertThat(TokenHeaders.quote("x".repeat(30))).isEqualTo("'" + "x".repeat(24) + "...'");
  }

  @Test
  void aGrantIsOneHeaderOfOneTo64VisibleAsciiCharacters() {
    TokenHeaders.Result ok = parse(List.of("42"), "ledger");
    assertThat(TokenHeaders.grant(ok, null)).isSameAs(ok);
    assertThat(TokenHeaders.grant(ok, List.of()).grant()).isNull();
    assertThat(TokenHeaders.grant(ok, List.of("694d8a3b1c2e0f11")).grant()).isEqualTo("694d8a3b1c2e0f11");
    assertThat(TokenHeaders.grant(ok, List.of(" a1\t")).grant()).isEqualTo("a1");
    String max = "!" + "x".repeat(62) + "~";
    assertThat(TokenHeaders.grant(ok, List.of(max)).grant()).isEqualTo(max);
    for (String bad : List.of("", "  ", "a".repeat(65), "a b", "a\u0000", "\u00e9t\u00e9", "a\u007f", "a\nb")) {
      TokenHeaders.Result r = TokenHeaders.grant(ok, List.of(bad));
      assertThat(r.rejection()).as("'%s'", bad).isEqualTo(Rejection.MALFORMED_TOKEN);
      assertThat(r.lock()).isEqualTo("ledger");
      assertThat(r.grant()).isNull();
      assertThat(r.detail()).as(bad).contains("Fencing-Grant");
    }
    assertThat(TokenHeaders.grant(ok, List.of("a1", "a1")).detail())
        .isEqualTo("2 Fencing-Grant headers: send exactly one");
    TokenHeaders.Result stale = parse(List.of("x"), "ledger");
    assertThat(TokenHeaders.grant(stale, List.of("a".repeat(100)))).as("an invalid token keeps its verdict")
        .isSameAs(stale);
  }
}
