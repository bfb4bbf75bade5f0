package dev.fencing.fence.http;

import java.math.BigInteger;
import java.util.List;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * Generators of malformed {@code Fencing-Token} values for the property tests, one per kind the README names, plus
 * the reference rule they are checked against: after optional SP/HTAB around it, {@code [1-9][0-9]{0,18}} up to
 * 2^63-1.
 */
final class BadTokens {

  private static final Pattern TOKEN = Pattern.compile("[1-9][0-9]{0,18}");
  private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

  private BadTokens() {
  }

  /** The reference rule: the token a value stands for, or null when it is malformed. */
  static Long reference(String value) {
    String v = value.replaceAll("^[ \t]+|[ \t]+$", "");
    if (!TOKEN.matcher(v).matches()) {
      return null;
    }
    BigInteger b = new BigInteger(v);
    return b.compareTo(MAX) > 0 ? null : b.longValue();
  }

  static Arbitrary<String> validDigits() {
    return Arbitraries.longs().between(1, Long.MAX_VALUE).map(Object::toString);
  }

  /** Values an HTTP client can put on the wire: visible ASCII, SP and HTAB (no control characters, no non-ASCII). */
  static Arbitrary<String> sendable() {
    return Arbitraries.oneOf(nonNumeric(), negative(), zeros(), leadingZero(), aboveInt64(), tooManyDigits(),
        blank(), signed(), decimalForms(), commaJoined(), innerWhitespace(), oversized(), trailingGarbage());
  }

  /** Every malformed kind, including control characters and non-ASCII digits no HTTP client would send. */
  static Arbitrary<String> any() {
    return Arbitraries.oneOf(sendable(), unicodeDigits(), controlCharacters());
  }

  static Arbitrary<String> nonNumeric() {
    return Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(24)
        .filter(s -> !s.chars().allMatch(Character::isDigit));
  }

  static Arbitrary<String> negative() {
    return Arbitraries.longs().between(0, Long.MAX_VALUE).map(n -> "-" + n);
  }

  static Arbitrary<String> zeros() {
    return Arbitraries.integers().between(1, 25).map("0"::repeat);
  }

  static Arbitrary<String> leadingZero() {
    return Combinators.combine(Arbitraries.integers().between(1, 5), validDigits())
        .as((n, d) -> "0".repeat(n) + d);
  }

  static Arbitrary<String> aboveInt64() {
    return Arbitraries.bigIntegers().between(MAX.add(BigInteger.ONE), new BigInteger("9".repeat(19)))
        .map(BigInteger::toString).edgeCases(c -> c.add(MAX.add(BigInteger.ONE).toString()));
  }

  static Arbitrary<String> tooManyDigits() {
    return Arbitraries.strings().numeric().ofMinLength(20).ofMaxLength(64).map(s -> "1" + s.substring(1));
  }

  static Arbitrary<String> blank() {
    return Arbitraries.strings().withChars(' ', '\t').ofMinLength(0).ofMaxLength(10);
  }

  static Arbitrary<String> signed() {
    return Combinators.combine(Arbitraries.of("+", "++", "-+", "+-", "--"), validDigits()).as(String::concat);
  }

  static Arbitrary<String> decimalForms() {
    return Combinators.combine(Arbitraries.longs().between(1, 1_000_000), Arbitraries.of(".0", ".5", "e3", "E2",
        "L", "l", "_000", "f", "d")).as((n, suffix) -> n + suffix)
        .edgeCases(c -> c.add("0x40"));
  }

  static Arbitrary<String> commaJoined() {
    return validDigits().list().ofMinSize(2).ofMaxSize(4)
        .flatMap(l -> Arbitraries.of(",", ", ", " ,", ";").map(sep -> String.join(sep, l)));
  }

  static Arbitrary<String> innerWhitespace() {
    return Combinators.combine(validDigits(), validDigits(), Arbitraries.of(" ", "\t", "  "))
        .as((a, b, ws) -> a + ws + b);
  }

  static Arbitrary<String> oversized() {
    return Combinators.combine(Arbitraries.integers().between(65, 8000), Arbitraries.of('9', '1', 'a'))
        .as((n, c) -> String.valueOf(c).repeat(n));
  }

  static Arbitrary<String> trailingGarbage() {
    return Combinators.combine(validDigits(), Arbitraries.strings().withCharRange('!', '~').ofMinLength(1)
        .ofMaxLength(4).filter(s -> !s.chars().allMatch(Character::isDigit)), Arbitraries.of(true, false))
        .as((d, g, before) -> before ? g + d : d + g);
  }

  /** Digits of other scripts: Character.isDigit says yes, the token rule says no. */
  static Arbitrary<String> unicodeDigits() {
    List<Character> zeros = List.of('\u0660', '\u06f0', '\u0966', '\uff10', '\u09e6', '\u0e50', '\u1040');
    return Combinators.combine(Arbitraries.of(zeros), validDigits(), Arbitraries.of(true, false))
        .as((zero, digits, mixed) -> {
          StringBuilder b = new StringBuilder();
          for (int i = 0; i < digits.length(); i++) {
            char ascii = digits.charAt(i);
            b.append(mixed && i % 2 == 0 ? ascii : (char) (zero + (ascii - '0')));
          }
          return b.toString();
        }).filter(s -> reference(s) == null);
  }

  static Arbitrary<String> controlCharacters() {
    return Combinators.combine(validDigits(), Arbitraries.chars().range('\u0000', '\u001f').with('\u007f', '\u0085',
        '\u00a0', '\u2028', '\u200b', '\ufeff'), Arbitraries.integers().between(0, 19))
        .as((d, c, at) -> {
          int i = Math.min(at, d.length());
          return d.substring(0, i) + c + d.substring(i);
        }).filter(s -> reference(s) == null);
  }
}
