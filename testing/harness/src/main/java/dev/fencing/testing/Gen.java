package dev.fencing.testing;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Seeded generator for the bad-input suites: plain {@link Random} with a fixed seed, so every run checks the same
 * cases and a failure names a case that reproduces. Shared by the bad-input suites of agent/core and the fences.
 */
public final class Gen {

  private final Random random;

  public Gen(long seed) {
    random = new Random(seed);
  }

  /** Uniform in [lo, hi], hi inclusive (also for Long.MAX_VALUE). */
  public long between(long lo, long hi) {
    return hi == Long.MAX_VALUE ? random.nextLong(lo - 1, hi) + 1 : random.nextLong(lo, hi + 1);
  }

  public int between(int lo, int hi) {
    return (int) between((long) lo, (long) hi);
  }

  public BigInteger between(BigInteger lo, BigInteger hi) {
    BigInteger span = hi.subtract(lo).add(BigInteger.ONE);
    BigInteger r;
    do {
      r = new BigInteger(span.bitLength(), random);
    } while (r.compareTo(span) >= 0);
    return lo.add(r);
  }

  public boolean bool() {
    return random.nextBoolean();
  }

  @SafeVarargs
  public final <T> T of(T... values) {
    return values[random.nextInt(values.length)];
  }

  public <T> T of(List<T> values) {
    return values.get(random.nextInt(values.size()));
  }

  /** One of the generators, equally likely. */
  @SafeVarargs
  public final <T> T oneOf(Supplier<? extends T>... generators) {
    return of(generators).get();
  }

  /** Characters from [from, to], length in [min, max]. */
  public String chars(char from, char to, int min, int max) {
    int n = between(min, max);
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      b.append((char) between(from, to));
    }
    return b.toString();
  }

  /** Characters from the alphabet, length in [min, max]. */
  public String charsOf(String alphabet, int min, int max) {
    int n = between(min, max);
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      b.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return b.toString();
  }

  /** Any chars (UTF-16 units, no surrogates), biased like a fuzzer to ASCII and controls. */
  public String anyString(int min, int max) {
    int n = between(min, max);
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      b.append(switch (random.nextInt(4)) {
        case 0 -> (char) between(0, 0x1f);
        case 1 -> (char) between(0x20, 0x7e);
        case 2 -> (char) between(0x7f, 0x2fff);
        default -> (char) between(0xe000, 0xffff);
      });
    }
    return b.toString();
  }

  public byte[] bytes(int min, int max) {
    byte[] b = new byte[between(min, max)];
    random.nextBytes(b);
    return b;
  }

  public <T> List<T> list(int min, int max, Supplier<T> element) {
    int n = between(min, max);
    List<T> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(element.get());
    }
    return out;
  }

  /** A valid token: 1 to 2^63-1 in decimal. */
  public String validDigits() {
    return Long.toString(between(1, Long.MAX_VALUE));
  }

  /** A case as a short printable name for the test report: escapes non-printables, shortens long values. */
  public static String show(Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof byte[] bytes) {
      return bytes.length > 24 ? "bytes[" + bytes.length + "]" : "bytes" + java.util.Arrays.toString(bytes);
    }
    if (value instanceof List<?> list) {
      List<String> parts = new ArrayList<>();
      list.forEach(v -> parts.add(show(v)));
      return parts.toString();
    }
    String s = value.toString();
    StringBuilder b = new StringBuilder("'");
    for (int i = 0; i < s.length() && i < 40; i++) {
      char c = s.charAt(i);
      b.append(c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\u%04x", (int) c));
    }
    b.append(s.length() > 40 ? "...' (" + s.length() + " chars)" : "'");
    return b.toString();
  }

  /** Hand-picked edge cases first, then generated values that pass keep, until there are count cases. */
  public static <T> List<T> cases(int count, List<T> edgeCases, Supplier<T> generator, Predicate<T> keep) {
    List<T> out = new ArrayList<>(count);
    for (T e : edgeCases) {
      if (keep.test(e)) {
        out.add(e);
      }
    }
    for (int attempts = 0; out.size() < count; attempts++) {
      if (attempts > count * 100) {
        throw new IllegalStateException("the generator keeps producing values the filter rejects");
      }
      T v = generator.get();
      if (keep.test(v)) {
        out.add(v);
      }
    }
    return out;
  }
}
