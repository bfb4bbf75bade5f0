package dev.fencing.agent.config;

import java.time.Duration;
import java.util.Locale;

/** Durations written as {@code 500ms}, {@code 10s}, {@code 2m} or {@code 1h}. */
public final class Durations {
  private Durations() {}

  /** Parses a duration; throws IllegalArgumentException (without message) when the text is not one. */
  public static Duration parse(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    int i = 0;
    // ASCII only: Character.isDigit and Long.parseLong would also take other scripts' digits.
    while (i < t.length() && t.charAt(i) >= '0' && t.charAt(i) <= '9') {
      i++;
    }
    if (i == 0 || i == t.length() || i > 12) {
      throw new IllegalArgumentException();
    }
    long n = Long.parseLong(t.substring(0, i));
    switch (t.substring(i).trim()) {
      case "ms":
        return Duration.ofMillis(n);
      case "s":
        return Duration.ofSeconds(n);
      case "m":
        return Duration.ofMinutes(n);
      case "h":
        return Duration.ofHours(n);
      default:
        throw new IllegalArgumentException();
    }
  }

  /**
   * Half of a non-negative duration, rounded down to the nanosecond, as {@link Duration#dividedBy(long)} gives it,
   * without the BigDecimal arithmetic that method uses: on Java 25 BigDecimal is not in the JDK's class data archive,
   * and its first use costs premain some 10 ms.
   */
  public static Duration half(Duration d) {
    long s = d.getSeconds();
    return Duration.ofSeconds(s / 2, (s % 2) * 500_000_000L + d.getNano() / 2);
  }

  /** The shortest exact text for a duration, e.g. {@code 10s}, {@code 1500ms}. */
  public static String format(Duration d) {
    long ms = d.toMillis();
    if (ms % 3_600_000 == 0 && ms != 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0 && ms != 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }
}
