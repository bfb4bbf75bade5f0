package dev.fencing.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenGrammar;
import dev.fencing.protocol.TokenHeaders;
import dev.fencing.testing.Gen;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input against the consumer fence's record-level decision, on real ConsumerRecords: generated
 * malformed {@code fencing-token} values (as raw bytes, also invalid UTF-8 and oversized), duplicated token headers,
 * and bad {@code fencing-lock} values beside a valid higher token are quarantined with the documented reason and
 * counted; the good record of the same batch is still delivered, and the fence never moves. The real-broker IT covers
 * a fixed set of the same kinds end to end. Cases come from a seeded {@link Gen} (same cases every run) plus
 * hand-picked edge cases.
 */
class BadHeaderPropertyTest {

  private static final String LOCK = "ledger";
  private static final long FENCE = 5;
  private static final Pattern TOKEN = Pattern.compile("[1-9][0-9]{0,18}");
  private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

  private MemoryStore store;
  private KafkaFenceMetrics metrics;
  private RecordFence fence;

  @BeforeEach
  void fenceAt5() {
    store = new MemoryStore();
    metrics = new KafkaFenceMetrics();
    Map<String, Object> config = new HashMap<>();
    config.put(KafkaFenceSettings.LOCKS, LOCK);
    config.put(KafkaFenceSettings.STORE, "memory");
    fence = new RecordFence(KafkaFenceSettings.from(config), store, metrics);
    store.check(LOCK, FENCE);
  }

  /** The token rule on raw header bytes: at most 64 bytes, UTF-8, [1-9][0-9]{0,18} up to 2^63-1 after SP/HTAB. */
  static Long reference(byte[] value) {
    if (value == null || value.length > FencingHeaders.MAX_TOKEN_BYTES) {
      return null;
    }
    String v = new String(value, StandardCharsets.UTF_8).replaceAll("^[ \t]+|[ \t]+$", "");
    if (!TOKEN.matcher(v).matches() || new BigInteger(v).compareTo(MAX) > 0) {
      return null;
    }
    return Long.parseLong(v);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("anyTokenBytes")
  void theHeaderReaderFollowsTheTokenRule(byte[] value) {
    RecordHeaders h = new RecordHeaders();
    h.add(FencingHeaders.LEGACY_LOCK, LOCK.getBytes(StandardCharsets.UTF_8));
    h.add(FencingHeaders.LEGACY_TOKEN, value);
    TokenHeaders.Result r = FencingHeaders.read(h, Set.of(LOCK));
    Long expected = reference(value);
    if (expected == null) {
      assertThat(r.rejection()).as(Gen.show(value)).isEqualTo(Rejection.MALFORMED_TOKEN);
    } else {
      assertThat(r.isValid()).as(Gen.show(value)).isTrue();
      assertThat(r.token()).isEqualTo(expected);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformedTokenBytes")
  void aMalformedTokenIsQuarantinedAndTheFenceStays(byte[] value) {
    RecordHeaders h = new RecordHeaders();
    h.add(FencingHeaders.LEGACY_LOCK, LOCK.getBytes(StandardCharsets.UTF_8));
    h.add(FencingHeaders.LEGACY_TOKEN, value);
    assertQuarantined(h, Rejection.MALFORMED_TOKEN);
  }

  /** Two or more token headers, even valid, equal or higher ones: malformed (one could be the old holder's). */
  @ParameterizedTest(name = "{0}, lock header first: {1}")
  @MethodSource("duplicatedTokens")
  void duplicatedTokenHeadersAreQuarantined(List<byte[]> values, boolean lockFirst) {
    RecordHeaders h = new RecordHeaders();
    if (lockFirst) {
      h.add(FencingHeaders.LEGACY_LOCK, LOCK.getBytes(StandardCharsets.UTF_8));
    }
    values.forEach(v -> h.add(FencingHeaders.LEGACY_TOKEN, v));
    if (!lockFirst) {
      h.add(FencingHeaders.LEGACY_LOCK, LOCK.getBytes(StandardCharsets.UTF_8));
    }
    assertQuarantined(h, Rejection.MALFORMED_TOKEN);
  }

  /** A valid token above the fence with a bad lock header: unknown-lock, and the higher token moves nothing. */
  @ParameterizedTest(name = "{0} with token {1}")
  @MethodSource("badLocksWithHigherToken")
  void aBadLockIsQuarantinedEvenWithAHigherToken(List<byte[]> locks, long token) {
    RecordHeaders h = new RecordHeaders();
    h.add(FencingHeaders.LEGACY_TOKEN, Long.toString(token).getBytes(StandardCharsets.UTF_8));
    locks.forEach(l -> h.add(FencingHeaders.LEGACY_LOCK, l));
    assertQuarantined(h, Rejection.UNKNOWN_LOCK);
  }

  @ParameterizedTest(name = "{0}, good lock header: {1}")
  @MethodSource("badLocksWithoutToken")
  void noTokenHeaderIsQuarantinedAsMissing(List<byte[]> locks, boolean withLock) {
    RecordHeaders h = new RecordHeaders();
    if (withLock) {
      h.add(FencingHeaders.LEGACY_LOCK, LOCK.getBytes(StandardCharsets.UTF_8));
    } else {
      locks.forEach(l -> h.add(FencingHeaders.LEGACY_LOCK, l));
    }
    h.add("fencing-token-other", "99".getBytes(StandardCharsets.UTF_8));
    assertQuarantined(h, Rejection.MISSING_TOKEN);
  }

  /** A {@code fencing} value: {@code token} (raw bytes, null: none) then ";" and {@code lock}. */
  private static byte[] fencing(byte[] token, byte[] lock) {
    byte[] t = token == null ? new byte[0] : token;
    byte[] l = lock == null ? new byte[0] : lock;
    byte[] v = Arrays.copyOf(t, t.length + 1 + l.length);
    v[t.length] = ';';
    System.arraycopy(l, 0, v, t.length + 1, l.length);
    return v;
  }

  private static byte[] beforeSeparator(byte[] value) {
    for (int i = 0; i < value.length; i++) {
      if (value[i] == ';') {
        return Arrays.copyOf(value, i);
      }
    }
    return value;
  }

  /** The same rule on the token field of the one-header form: the bytes before its first ';'. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("anyTokenBytes")
  void theFencingHeaderFollowsTheTokenRule(byte[] value) {
    RecordHeaders h = new RecordHeaders();
    h.add(FencingHeaders.FENCING, value == null ? null : fencing(value, utf8(LOCK)));
    TokenHeaders.Result r = FencingHeaders.read(h, Set.of(LOCK));
    Long expected = reference(value == null ? null : beforeSeparator(value));
    if (expected == null) {
      assertThat(r.rejection()).as(Gen.show(value)).isEqualTo(Rejection.MALFORMED_TOKEN);
    } else if (beforeSeparator(value) == value) {
      assertThat(r.isValid()).as(Gen.show(value)).isTrue();
      assertThat(r.token()).isEqualTo(expected);
    } else if (r.isValid()) { // a ';' in the value ends the token; what follows is the lock
      assertThat(r.token()).as(Gen.show(value)).isEqualTo(expected);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformedTokenBytesWithoutSeparator")
  void aMalformedTokenInTheFencingHeaderIsQuarantinedAndTheFenceStays(byte[] value) {
    RecordHeaders h = new RecordHeaders();
    h.add(FencingHeaders.FENCING, fencing(value, utf8(LOCK)));
    assertQuarantined(h, Rejection.MALFORMED_TOKEN);
  }

  /** Two or more {@code fencing} headers, even equal or higher ones: malformed, as two token headers. */
  @ParameterizedTest(name = "{0}, lock header first: {1}")
  @MethodSource("duplicatedTokens")
  void duplicatedFencingHeadersAreQuarantined(List<byte[]> values, boolean ignored) {
    RecordHeaders h = new RecordHeaders();
    values.forEach(v -> h.add(FencingHeaders.FENCING, fencing(v, utf8(LOCK))));
    RecordFence.Outcome<String, String> out = fence.filter(new Records().add("t", 0, "bad", h)
        .fenced(LOCK, Long.toString(FENCE), "good").build());
    assertThat(Records.values(out.accepted())).containsExactly("good");
    assertThat(out.quarantined()).singleElement().satisfies(q -> {
      assertThat(q.reason()).isEqualTo(Rejection.MALFORMED_TOKEN);
      assertThat(q.detail()).contains(values.size() + " fencing headers");
    });
    assertThat(store.current(LOCK)).isEqualTo(FENCE);
  }

  /** A valid token above the fence with a lock field that is not a guarded lock: unknown-lock, nothing moves. */
  @ParameterizedTest(name = "{0} with token {1}")
  @MethodSource("badLocksWithHigherToken")
  void aBadLockInTheFencingHeaderIsQuarantinedEvenWithAHigherToken(List<byte[]> locks, long token) {
    byte[] lock = locks.isEmpty() ? null : locks.get(0);
    byte[] value = lock == null ? utf8(Long.toString(token)) : fencing(utf8(Long.toString(token)), lock);
    if (locks.size() > 1) { // several locks: the comma-joined form
      value = fencing(utf8(Long.toString(token)), utf8(String.join(",", locks.stream()
          .map(l -> new String(l, StandardCharsets.UTF_8)).toList())));
    }
    String lockField = TokenGrammar.kafkaFields(new String(value, StandardCharsets.UTF_8))[1];
    if (LOCK.equals(lockField == null ? null : lockField.strip())) {
      return; // generated bytes whose ';' cut the lock field down to the guarded lock: a valid record
    }
    RecordHeaders h = new RecordHeaders();
    h.add(FencingHeaders.FENCING, value);
    assertQuarantined(h, value.length > FencingHeaders.MAX_FENCING_BYTES ? Rejection.MALFORMED_TOKEN
        : Rejection.UNKNOWN_LOCK);
  }

  private void assertQuarantined(RecordHeaders bad, Rejection reason) {
    RecordFence.Outcome<String, String> out = fence.filter(new Records().add("t", 0, "bad", bad)
        .fenced(LOCK, Long.toString(FENCE), "good").build());
    assertThat(Records.values(out.accepted())).containsExactly("good");
    assertThat(out.quarantined()).singleElement().satisfies(q -> {
      assertThat(q.reason()).isEqualTo(reason);
      assertThat(q.record().value()).isEqualTo("bad");
      assertThat(q.lockLabel()).isEqualTo(LOCK);
      assertThat(q.detail().length()).isLessThan(200);
      assertThat(q.detail().chars().allMatch(c -> c >= 0x20 && c < 0x7f)).as(q.detail()).isTrue();
    });
    assertThat(metrics.rejections(LOCK, reason)).isEqualTo(1);
    assertThat(store.current(LOCK)).isEqualTo(FENCE);
    // The fence still judges as before: the current token passes, a lower one is stale.
    RecordFence.Outcome<String, String> after = fence.filter(new Records().fenced(LOCK, Long.toString(FENCE - 1), "old")
        .fenced(LOCK, Long.toString(FENCE), "same").build());
    assertThat(Records.values(after.accepted())).containsExactly("same");
  }

  // ------------------------------------------------------------------------------------------------ generators

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Named<Object> named(Object value) {
    return Named.of(Gen.show(value), value);
  }

  private static final List<byte[]> MALFORMED_EDGE_CASES = List.of(new byte[0], utf8(" "), utf8("0"), utf8("-1"),
      utf8("+1"), utf8("01"), utf8("9223372036854775808"), utf8("1" + "0".repeat(64)), utf8("1.0"), utf8("1,2"),
      utf8("\u0661"), new byte[] {(byte) 0xc3, (byte) 0x28}, new byte[] {'1', (byte) 0xff}, new byte[] {'1', 0});

  private static byte[] malformedTokenBytes(Gen g) {
    byte[] v;
    do {
      int pick = g.between(1, 13);
      if (pick <= 8) {
        v = utf8(g.oneOf(
            () -> g.chars('!', '~', 1, 24),
            () -> "-" + g.between(0, Long.MAX_VALUE),
            () -> "0".repeat(g.between(1, 25)),
            () -> "0" + g.validDigits(),
            () -> g.between(MAX.add(BigInteger.ONE), new BigInteger("9".repeat(40))).toString(),
            () -> g.charsOf(" \t", 0, 8),
            () -> "+" + g.validDigits(),
            () -> g.validDigits() + g.of(".0", "e3", "L", "_0", " 1", ",7", ", 7", ";7"),
            () -> {
              String d = g.validDigits();
              char c = g.bool() ? (char) g.between(0, 0x1f)
                  : g.of('\u007f', '\u00a0', '\u2028', '\ufeff', '\u0663', '\uff11');
              return d.substring(0, d.length() / 2) + c + d.substring(d.length() / 2);
            },
            () -> g.chars('\u0660', '\u0669', 1, 19)));
      } else if (pick <= 10) {
        v = g.bytes(1, 30);
      } else if (pick == 11) {
        v = new byte[g.between(65, 100_000)];
        Arrays.fill(v, g.of((byte) '9', (byte) '1', (byte) 0));
      } else if (pick == 12) {
        v = new byte[0];
      } else {
        v = null;
      }
    } while (reference(v) != null);
    return v;
  }

  static Stream<Arguments> malformedTokenBytes() {
    Gen g = new Gen(9_001);
    List<byte[]> edges = new ArrayList<>(MALFORMED_EDGE_CASES);
    edges.add(null);
    return Gen.cases(1000, edges, () -> malformedTokenBytes(g), v -> reference(v) == null).stream()
        .map(v -> Arguments.of(named(v)));
  }

  static Stream<Arguments> malformedTokenBytesWithoutSeparator() {
    return malformedTokenBytes().filter(a -> {
      byte[] v = (byte[]) ((Named<?>) a.get()[0]).getPayload();
      return v == null || beforeSeparator(v) == v;
    });
  }

  static Stream<Arguments> anyTokenBytes() {
    Gen g = new Gen(9_002);
    List<byte[]> edges = new ArrayList<>(MALFORMED_EDGE_CASES);
    edges.addAll(List.of(utf8("1"), utf8("5"), utf8("9223372036854775807"), utf8(" 7\t"),
        utf8(" ".repeat(44) + "9223372036854775807"), utf8(" ".repeat(46) + "9223372036854775807")));
    return Gen.cases(2000, edges, () -> g.oneOf(() -> malformedTokenBytes(g), () -> utf8(g.validDigits()),
        () -> utf8(" " + g.validDigits() + "\t"), () -> g.bytes(0, 70)), v -> true).stream()
        .map(v -> Arguments.of(named(v)));
  }

  static Stream<Arguments> duplicatedTokens() {
    Gen g = new Gen(9_003);
    String fence = Long.toString(FENCE);
    List<Arguments> out = new ArrayList<>();
    out.add(Arguments.of(named(List.of(utf8(fence), utf8(fence))), true));
    out.add(Arguments.of(named(List.of(utf8("6"), utf8("7"))), false));
    while (out.size() < 300) {
      List<byte[]> values = g.list(2, 4, () -> g.oneOf(() -> utf8(g.validDigits()), () -> utf8(fence),
          () -> utf8(Long.toString(g.between(FENCE + 1, Long.MAX_VALUE))), () -> malformedTokenBytes(g)));
      out.add(Arguments.of(named(values), g.bool()));
    }
    return out.stream();
  }

  /** Lock headers that do not name exactly one guarded lock: none, several, other names, oversized, bad bytes. */
  private static List<byte[]> badLocks(Gen g) {
    Supplier<byte[]> wrong = () -> {
      byte[] v;
      do {
        v = g.oneOf(
            () -> utf8(g.of("Ledger", "LEDGER", "ledger,ledger", "ledger, billing", "led ger", "ledger\u0000",
                "\u0435ledger", "ledger\u200b", "", "*", "(unknown)")),
            () -> utf8(g.anyString(0, 30)),
            () -> utf8(LOCK + g.chars('a', 'z', 600, 600)),
            () -> g.bytes(0, 12),
            () -> null);
      } while (v != null && new String(v, StandardCharsets.UTF_8).replaceAll("^[ \t]+|[ \t]+$", "").equals(LOCK));
      return v;
    };
    return g.oneOf(() -> Arrays.asList(wrong.get()), () -> g.list(2, 3, () -> utf8(LOCK)), List::of);
  }

  static Stream<Arguments> badLocksWithHigherToken() {
    Gen g = new Gen(9_004);
    List<Arguments> out = new ArrayList<>();
    out.add(Arguments.of(named(List.of()), Long.MAX_VALUE));
    out.add(Arguments.of(named(List.of(utf8("Ledger"))), FENCE + 1));
    while (out.size() < 500) {
      out.add(Arguments.of(named(badLocks(g)), g.between(FENCE + 1, Long.MAX_VALUE)));
    }
    return out.stream();
  }

  static Stream<Arguments> badLocksWithoutToken() {
    Gen g = new Gen(9_005);
    List<Arguments> out = new ArrayList<>();
    while (out.size() < 100) {
      out.add(Arguments.of(named(badLocks(g)), g.bool()));
    }
    return out.stream();
  }
}
