package dev.fencing.fence.http;

import dev.fencing.testing.Gen;
import java.math.BigInteger;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Generators of malformed {@code Fencing-Token} values for the bad-input suites, one per kind the README names, plus
 * the reference rule they are checked against: after optional SP/HTAB around it, {@code [1-9][0-9]{0,18}} up to
 * 2^63-1. Each generator draws from a seeded {@link Gen}, so the cases are the same on every run.
 */
final class BadTokens {

  private static final Pattern TOKEN = Pattern.compile("[1-9][0-9]{0,18}");
  private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

  /** Hand-picked values at the edges of the rule. */
  static final List<String> EDGE_CASES = List.of("", " ", "\t", "0", "-1", "+1", "01", "9223372036854775808",
      "99999999999999999999", "0x40", "1.0", "1e3", "1,2", "1 2", "\u0661", "\uff11", "1\u0000", "\u00a01");

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

  /** Values an HTTP client can put on the wire: visible ASCII, SP and HTAB (no control characters, no non-ASCII). */
  static String sendable(Gen g) {
    return g.oneOf(() -> nonNumeric(g), () -> negative(g), () -> zeros(g), () -> leadingZero(g),
        () -> aboveInt64(g), () -> tooManyDigits(g), () -> blank(g), () -> signed(g), () -> decimalForms(g),
        () -> commaJoined(g), () -> innerWhitespace(g), () -> oversized(g), () -> trailingGarbage(g));
  }

  /** Every malformed kind, including control characters and non-ASCII digits no HTTP client would send. */
  static String any(Gen g) {
    return g.oneOf(() -> sendable(g), () -> unicodeDigits(g), () -> controlCharacters(g));
  }

  static String nonNumeric(Gen g) {
    String s;
    do {
      s = g.chars('!', '~', 1, 24);
    } while (s.chars().allMatch(Character::isDigit));
    return s;
  }

  static String negative(Gen g) {
    return "-" + g.between(0, Long.MAX_VALUE);
  }

  static String zeros(Gen g) {
    return "0".repeat(g.between(1, 25));
  }

  static String leadingZero(Gen g) {
    return "0".repeat(g.between(1, 5)) + g.validDigits();
  }

  static String aboveInt64(Gen g) {
    return g.between(MAX.add(BigInteger.ONE), new BigInteger("9".repeat(19))).toString();
  }

  static String tooManyDigits(Gen g) {
    return "1" + g.charsOf("0123456789", 19, 63);
  }

  static String blank(Gen g) {
    return g.charsOf(" \t", 0, 10);
  }

  static String signed(Gen g) {
    return g.of("+", "++", "-+", "+-", "--") + g.validDigits();
  }

  static String decimalForms(Gen g) {
    return g.between(1, 1_000_000) + g.of(".0", ".5", "e3", "E2", "L", "l", "_000", "f", "d");
  }

  static String commaJoined(Gen g) {
    return String.join(g.of(",", ", ", " ,", ";"), g.list(2, 4, g::validDigits));
  }

  static String innerWhitespace(Gen g) {
    return g.validDigits() + g.of(" ", "\t", "  ") + g.validDigits();
  }

  static String oversized(Gen g) {
    return String.valueOf(g.of('9', '1', 'a')).repeat(g.between(65, 8000));
  }

  static String trailingGarbage(Gen g) {
    String garbage;
    do {
      garbage = g.chars('!', '~', 1, 4);
    } while (garbage.chars().allMatch(Character::isDigit));
    String d = g.validDigits();
    return g.bool() ? garbage + d : d + garbage;
  }

  /** Digits of other scripts: Character.isDigit says yes, the token rule says no. */
  static String unicodeDigits(Gen g) {
    List<Character> zeros = List.of('\u0660', '\u06f0', '\u0966', '\uff10', '\u09e6', '\u0e50', '\u1040');
    String s;
    do {
      char zero = g.of(zeros);
      String digits = g.validDigits();
      boolean mixed = g.bool();
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < digits.length(); i++) {
        char ascii = digits.charAt(i);
        b.append(mixed && i % 2 == 0 ? ascii : (char) (zero + (ascii - '0')));
      }
      s = b.toString();
    } while (reference(s) != null);
    return s;
  }

  static String controlCharacters(Gen g) {
    String s;
    do {
      String d = g.validDigits();
      char c = g.bool() ? (char) g.between(0, 0x1f) : g.of('\u007f', '\u0085', '\u00a0', '\u2028', '\u200b', '\ufeff');
      int i = Math.min(g.between(0, 19), d.length());
      s = d.substring(0, i) + c + d.substring(i);
    } while (reference(s) != null);
    return s;
  }
}
