package dev.fencing.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.http.InMemoryFenceStore;
import dev.fencing.fence.http.Rejection;
import dev.fencing.fence.http.TokenHeaders;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.BeforeTry;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Bad input against the consumer fence's record-level decision (issue 8), on real ConsumerRecords: generated
 * malformed {@code fencing-token} values (as raw bytes, also invalid UTF-8 and oversized), duplicated token headers,
 * and bad {@code fencing-lock} values beside a valid higher token are quarantined with the documented reason and
 * counted; the good record of the same batch is still delivered, and the fence never moves. The real-broker IT covers
 * a fixed set of the same kinds end to end.
 */
class BadHeaderPropertyTest {

  private static final String LOCK = "ledger";
  private static final long FENCE = 5;
  private static final Pattern TOKEN = Pattern.compile("[1-9][0-9]{0,18}");
  private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

  private InMemoryFenceStore store;
  private KafkaFenceMetrics metrics;
  private RecordFence fence;

  @BeforeTry
  void fenceAt5() {
    store = new InMemoryFenceStore();
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

  @Property(tries = 2000)
  void theHeaderReaderFollowsTheTokenRule(@ForAll("anyTokenBytes") byte[] value) {
    RecordHeaders h = new RecordHeaders();
    h.add(FencingHeaders.LOCK, LOCK.getBytes(StandardCharsets.UTF_8));
    h.add(FencingHeaders.TOKEN, value);
    TokenHeaders.Result r = FencingHeaders.read(h, Set.of(LOCK));
    Long expected = reference(value);
    if (expected == null) {
      assertThat(r.rejection()).isEqualTo(Rejection.MALFORMED_TOKEN);
    } else {
      assertThat(r.isValid()).isTrue();
      assertThat(r.token()).isEqualTo(expected);
    }
  }

  @Property(tries = 1000)
  void aMalformedTokenIsQuarantinedAndTheFenceStays(@ForAll("malformedTokenBytes") byte[] value) {
    RecordHeaders h = new RecordHeaders();
    h.add(FencingHeaders.LOCK, LOCK.getBytes(StandardCharsets.UTF_8));
    h.add(FencingHeaders.TOKEN, value);
    assertQuarantined(h, Rejection.MALFORMED_TOKEN);
  }

  /** Two or more token headers, even valid, equal or higher ones: malformed (one could be the old holder's). */
  @Property(tries = 300)
  void duplicatedTokenHeadersAreQuarantined(@ForAll("duplicatedTokens") List<byte[]> values,
      @ForAll boolean lockFirst) {
    RecordHeaders h = new RecordHeaders();
    if (lockFirst) {
      h.add(FencingHeaders.LOCK, LOCK.getBytes(StandardCharsets.UTF_8));
    }
    values.forEach(v -> h.add(FencingHeaders.TOKEN, v));
    if (!lockFirst) {
      h.add(FencingHeaders.LOCK, LOCK.getBytes(StandardCharsets.UTF_8));
    }
    assertQuarantined(h, Rejection.MALFORMED_TOKEN);
  }

  /** A valid token above the fence with a bad lock header: unknown-lock, and the higher token moves nothing. */
  @Property(tries = 500)
  void aBadLockIsQuarantinedEvenWithAHigherToken(@ForAll("badLocks") List<byte[]> locks,
      @ForAll("higher") long token) {
    RecordHeaders h = new RecordHeaders();
    h.add(FencingHeaders.TOKEN, Long.toString(token).getBytes(StandardCharsets.UTF_8));
    locks.forEach(l -> h.add(FencingHeaders.LOCK, l));
    assertQuarantined(h, Rejection.UNKNOWN_LOCK);
  }

  @Property(tries = 100)
  void noTokenHeaderIsQuarantinedAsMissing(@ForAll("badLocks") List<byte[]> locks, @ForAll boolean withLock) {
    RecordHeaders h = new RecordHeaders();
    if (withLock) {
      h.add(FencingHeaders.LOCK, LOCK.getBytes(StandardCharsets.UTF_8));
    } else {
      locks.forEach(l -> h.add(FencingHeaders.LOCK, l));
    }
    h.add("fencing-token-other", "99".getBytes(StandardCharsets.UTF_8));
    assertQuarantined(h, Rejection.MISSING_TOKEN);
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

  private static Arbitrary<String> validDigits() {
    return Arbitraries.longs().between(1, Long.MAX_VALUE).map(Object::toString);
  }

  private static Arbitrary<byte[]> utf8(Arbitrary<String> s) {
    return s.map(v -> v.getBytes(StandardCharsets.UTF_8));
  }

  @Provide
  Arbitrary<byte[]> malformedTokenBytes() {
    Arbitrary<String> text = Arbitraries.oneOf(
        Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(24),
        Arbitraries.longs().between(0, Long.MAX_VALUE).map(n -> "-" + n),
        Arbitraries.integers().between(1, 25).map("0"::repeat),
        validDigits().map(d -> "0" + d),
        Arbitraries.bigIntegers().between(MAX.add(BigInteger.ONE), new BigInteger("9".repeat(40)))
            .map(BigInteger::toString),
        Arbitraries.strings().withChars(' ', '\t').ofMaxLength(8),
        validDigits().map(d -> "+" + d),
        Combinators.combine(validDigits(), Arbitraries.of(".0", "e3", "L", "_0", " 1", ",7", ", 7", ";7"))
            .as(String::concat),
        Combinators.combine(validDigits(), Arbitraries.chars().range('\u0000', '\u001f').with('\u007f', '\u00a0',
            '\u2028', '\ufeff', '\u0663', '\uff11')).as((d, c) -> d.substring(0, d.length() / 2) + c
            + d.substring(d.length() / 2)),
        Arbitraries.strings().withCharRange('\u0660', '\u0669').ofMinLength(1).ofMaxLength(19));
    Arbitrary<byte[]> raw = Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(30);
    Arbitrary<byte[]> oversized = Combinators.combine(Arbitraries.integers().between(65, 100_000),
        Arbitraries.of((byte) '9', (byte) '1', (byte) 0)).as((n, b) -> {
          byte[] v = new byte[n];
          java.util.Arrays.fill(v, b);
          return v;
        });
    return Arbitraries.frequencyOf(Tuple.of(8, utf8(text)), Tuple.of(2, raw), Tuple.of(1, oversized),
        Tuple.of(1, Arbitraries.of(new byte[0])), Tuple.of(1, Arbitraries.just((byte[]) null)))
        .filter(v -> reference(v) == null);
  }

  @Provide
  Arbitrary<byte[]> anyTokenBytes() {
    return Arbitraries.oneOf(malformedTokenBytes(), utf8(validDigits()),
        utf8(validDigits().map(d -> " " + d + "\t")), Arbitraries.bytes().array(byte[].class).ofMaxSize(70));
  }

  @Provide
  Arbitrary<List<byte[]>> duplicatedTokens() {
    return Arbitraries.oneOf(utf8(validDigits()), utf8(Arbitraries.just(Long.toString(FENCE))),
        utf8(Arbitraries.longs().between(FENCE + 1, Long.MAX_VALUE).map(Object::toString)), malformedTokenBytes())
        .list().ofMinSize(2).ofMaxSize(4);
  }

  @Provide
  Arbitrary<Long> higher() {
    return Arbitraries.longs().between(FENCE + 1, Long.MAX_VALUE);
  }

  /** Lock headers that do not name exactly one guarded lock: none, several, other names, oversized, bad bytes. */
  @Provide
  Arbitrary<List<byte[]>> badLocks() {
    Arbitrary<byte[]> wrong = Arbitraries.oneOf(
        utf8(Arbitraries.of("Ledger", "LEDGER", "ledger,ledger", "ledger, billing", "led ger", "ledger\u0000",
            "\u0435ledger", "ledger\u200b", "", "*", "(unknown)")),
        utf8(Arbitraries.strings().ofMaxLength(30).filter(s -> !s.strip().equals(LOCK))),
        utf8(Arbitraries.strings().withCharRange('a', 'z').ofLength(600).map(s -> LOCK + s)),
        Arbitraries.bytes().array(byte[].class).ofMaxSize(12),
        Arbitraries.just((byte[]) null))
        .filter(v -> v == null || !new String(v, StandardCharsets.UTF_8).replaceAll("^[ \t]+|[ \t]+$", "")
            .equals(LOCK));
    Arbitrary<List<byte[]>> several = utf8(Arbitraries.just(LOCK)).list().ofMinSize(2).ofMaxSize(3);
    return Arbitraries.oneOf(wrong.list().ofSize(1), several, Arbitraries.just(List.of()));
  }
}
