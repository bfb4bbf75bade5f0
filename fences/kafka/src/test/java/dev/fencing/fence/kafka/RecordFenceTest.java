package dev.fencing.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.http.FenceStore;
import dev.fencing.fence.http.FenceStoreException;
import dev.fencing.fence.http.InMemoryFenceStore;
import dev.fencing.fence.http.Rejection;
import dev.fencing.fence.http.Verdict;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The fence's decisions on real ConsumerRecords, with the in-memory store (or a failing fake where said). */
class RecordFenceTest {

  private final InMemoryFenceStore store = new InMemoryFenceStore();
  private final KafkaFenceMetrics metrics = new KafkaFenceMetrics();

  private RecordFence fence(String... settings) {
    return fence(store, settings);
  }

  private RecordFence fence(FenceStore store, String... settings) {
    Map<String, Object> config = new HashMap<>();
    config.put(KafkaFenceSettings.LOCKS, "ledger");
    config.put(KafkaFenceSettings.STORE, "memory");
    for (int i = 0; i < settings.length; i += 2) {
      config.put(settings[i], settings[i + 1]);
    }
    return new RecordFence(KafkaFenceSettings.from(config), store, metrics);
  }

  @Test
  void acceptsTheHighestAndEqualTokensAndDropsLowerOnes() {
    RecordFence fence = fence();
    RecordFence.Outcome<String, String> first = fence.filter(new Records()
        .fenced("ledger", "5", "a").fenced("ledger", "5", "b").build());
    assertThat(Records.values(first.accepted())).containsExactly("a", "b");
    assertThat(store.current("ledger")).isEqualTo(5);

    RecordFence.Outcome<String, String> second = fence.filter(new Records()
        .fenced("ledger", "7", "new").fenced("ledger", "5", "old").fenced("ledger", "7", "new2").build());
    assertThat(Records.values(second.accepted())).containsExactly("new", "new2");
    assertThat(second.quarantined()).singleElement().satisfies(q -> {
      assertThat(q.reason()).isEqualTo(Rejection.STALE_TOKEN);
      assertThat(q.token()).isEqualTo(5);
      assertThat(q.current()).isEqualTo(7);
      assertThat(q.lockLabel()).isEqualTo("ledger");
      assertThat(q.detail()).contains("token 5 for lock 'ledger' is lower than the fence token 7");
    });
    assertThat(store.current("ledger")).isEqualTo(7);

    RecordFence.Outcome<String, String> third = fence.filter(new Records().fenced("ledger", "6", "x").build());
    assertThat(third.accepted().isEmpty()).isTrue();
    assertThat(metrics.rejections("ledger", Rejection.STALE_TOKEN)).isEqualTo(2);
    assertThat(store.current("ledger")).isEqualTo(7);
  }

  private static Records granted(Records r, String token, String grant, String value) {
    return grant == null ? r.fenced("ledger", token, value)
        : r.add("t", 0, value, "fencing-lock", "ledger", "fencing-token", token, "fencing-grant", grant);
  }

  @Test
  void anEqualTokenFromAnotherGrantIsDroppedAsReplayedAndTheFenceStays() {
    RecordFence fence = fence();
    RecordFence.Outcome<String, String> first = fence.filter(granted(granted(granted(new Records(),
        "5", "a1", "a"), "5", "b2", "replay"), "5", "a1", "a2").build());
    assertThat(Records.values(first.accepted())).containsExactly("a", "a2");
    assertThat(first.quarantined()).singleElement().satisfies(q -> {
      assertThat(q.reason()).isEqualTo(Rejection.REPLAYED_TOKEN);
      assertThat(q.token()).isEqualTo(5);
      assertThat(q.current()).isEqualTo(5);
      assertThat(q.detail()).contains("token 5 for lock 'ledger' was issued to another grant than this record's "
          + "('b2')");
    });
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.http.FenceState(5, "a1"));

    RecordFence.Outcome<String, String> second = fence.filter(granted(granted(granted(new Records(),
        "5", null, "no-grant"), "5", "c3", "other"), "5", "a1", "same").build());
    assertThat(Records.values(second.accepted())).containsExactly("same");
    assertThat(second.quarantined()).extracting(Quarantine::reason)
        .containsExactly(Rejection.REPLAYED_TOKEN, Rejection.REPLAYED_TOKEN);
    assertThat(metrics.rejections("ledger", Rejection.REPLAYED_TOKEN)).isEqualTo(3);
    assertThat(metrics.rejections("ledger", Rejection.STALE_TOKEN)).isZero();
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.http.FenceState(5, "a1"));

    // A higher token from the other grant advances; its grant counts from then on.
    RecordFence.Outcome<String, String> third = fence.filter(granted(granted(new Records(),
        "6", "b2", "b"), "6", "a1", "a-replay").build());
    assertThat(Records.values(third.accepted())).containsExactly("b");
    assertThat(third.quarantined()).extracting(Quarantine::reason).containsExactly(Rejection.REPLAYED_TOKEN);
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.http.FenceState(6, "b2"));
  }

  @Test
  void withoutAStoredGrantEqualTokensPassAsBefore() {
    RecordFence fence = fence();
    RecordFence.Outcome<String, String> out = fence.filter(granted(granted(granted(new Records(),
        "5", null, "a"), "5", "x", "b"), "5", "y", "c").build());
    assertThat(Records.values(out.accepted())).containsExactly("a", "b", "c");
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.http.FenceState(5, null));
  }

  @Test
  void anAdvanceOvertakenByAnotherGrantWithTheSameTokenIsReplayed() {
    store.check("ledger", 3, "old", false);
    FenceStore racing = new FenceStore() {
      @Override
      public Verdict check(String lock, long token, boolean strict) {
        return check(lock, token, null, strict);
      }

      @Override
      public Verdict check(String lock, long token, String grant, boolean strict) {
        store.check(lock, token, "theirs", strict); // another consumer advanced to this token first
        return store.check(lock, token, grant, strict);
      }

      @Override
      public long current(String lock) {
        return store.current(lock);
      }

      @Override
      public dev.fencing.fence.http.FenceState state(String lock) {
        return store.state(lock);
      }
    };
    RecordFence.Outcome<String, String> out = fence(racing).filter(granted(granted(granted(new Records(),
        "3", "old", "equal"), "4", "mine", "between"), "5", "mine", "mine").build());
    assertThat(Records.values(out.accepted())).containsExactly("equal");
    assertThat(out.quarantined()).extracting(Quarantine::reason)
        .containsExactly(Rejection.STALE_TOKEN, Rejection.REPLAYED_TOKEN);
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.http.FenceState(5, "theirs"));
  }

  @Test
  void aMalformedGrantIsAMalformedToken() {
    RecordFence fence = fence();
    Records r = new Records();
    r.add("t", 0, "long", "fencing-lock", "ledger", "fencing-token", "5", "fencing-grant", "a".repeat(65));
    r.add("t", 0, "blank", "fencing-lock", "ledger", "fencing-token", "5", "fencing-grant", "a b");
    r.add("t", 0, "utf8", "fencing-lock", "ledger", "fencing-token", "5", "fencing-grant", "\u00e9t\u00e9");
    r.add("t", 0, "empty", "fencing-lock", "ledger", "fencing-token", "5", "fencing-grant", "");
    r.add("t", 0, "null", "fencing-lock", "ledger", "fencing-token", "5", "fencing-grant", null);
    r.add("t", 0, "two", "fencing-lock", "ledger", "fencing-token", "5", "fencing-grant", "a1", "fencing-grant", "a1");
    r.add("t", 0, "ok", "fencing-lock", "ledger", "fencing-token", "4", "fencing-grant", "!" + "x".repeat(63));
    RecordFence.Outcome<String, String> out = fence.filter(r.build());
    assertThat(Records.values(out.accepted())).containsExactly("ok");
    assertThat(out.quarantined()).hasSize(6).allSatisfy(q -> {
      assertThat(q.reason()).isEqualTo(Rejection.MALFORMED_TOKEN);
      assertThat(q.detail()).contains("fencing-grant").doesNotContain("Fencing-Grant");
    });
    assertThat(store.current("ledger")).isEqualTo(4);
  }

  @Test
  void anOlderTokenBeforeANewerOneInTheSameBatchIsAccepted() {
    RecordFence.Outcome<String, String> out = fence().filter(new Records()
        .fenced("ledger", "3", "old-first").fenced("ledger", "4", "new").build());
    assertThat(Records.values(out.accepted())).containsExactly("old-first", "new");
    assertThat(store.current("ledger")).isEqualTo(4);
  }

  @Test
  void nothingRefusedReturnsTheSameBatch() {
    ConsumerRecords<String, String> batch = new Records().fenced("ledger", "1", "a").build();
    assertThat(fence().filter(batch).accepted()).isSameAs(batch);
  }

  @Test
  void strictModeAcceptsEachTokenOnce() {
    RecordFence fence = fence(KafkaFenceSettings.STRICT, "true");
    RecordFence.Outcome<String, String> out = fence.filter(new Records()
        .fenced("ledger", "1", "a").fenced("ledger", "1", "again").fenced("ledger", "2", "b").build());
    assertThat(Records.values(out.accepted())).containsExactly("a", "b");
    assertThat(out.quarantined()).singleElement().satisfies(q -> assertThat(q.detail()).contains("strict"));
    assertThat(fence.filter(new Records().fenced("ledger", "2", "c").build()).accepted().isEmpty()).isTrue();
    assertThat(store.current("ledger")).isEqualTo(2);
  }

  static Stream<Arguments> malformed() {
    RecordHeaders duplicated = new RecordHeaders();
    duplicated.add("fencing-lock", "ledger".getBytes());
    duplicated.add("fencing-token", "9".getBytes());
    duplicated.add("fencing-token", "9".getBytes());
    RecordHeaders nullValue = new RecordHeaders();
    nullValue.add("fencing-lock", "ledger".getBytes());
    nullValue.add("fencing-token", null);
    RecordHeaders huge = new RecordHeaders();
    huge.add("fencing-lock", "ledger".getBytes());
    huge.add("fencing-token", "9".repeat(100_000).getBytes());
    return Stream.of(
        Arguments.of("non-numeric", headers("abc"), "non-numeric"),
        Arguments.of("negative", headers("-9"), "negative"),
        Arguments.of("zero", headers("0"), "token 0"),
        Arguments.of("above int64", headers("9223372036854775808"), "above"),
        Arguments.of("empty", headers(""), "empty"),
        Arguments.of("duplicated header", duplicated, "2 fencing-token headers"),
        Arguments.of("oversized", huge, "oversized fencing-token header (100000 bytes)"),
        Arguments.of("20 digits", headers("10000000000000000000"), "oversized token"),
        Arguments.of("null value", nullValue, "empty"),
        Arguments.of("signed", headers("+9"), "signed"),
        Arguments.of("leading zero", headers("09"), "leading zero"),
        Arguments.of("comma-joined", headers("9,9"), "several tokens"),
        Arguments.of("non-ASCII digits", headers("٩"), "non-numeric"));
  }

  private static RecordHeaders headers(String token) {
    RecordHeaders h = new RecordHeaders();
    h.add("fencing-lock", "ledger".getBytes());
    h.add("fencing-token", token.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    return h;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformed")
  void aMalformedTokenIsQuarantinedAndNeverMovesTheFence(String kind, RecordHeaders headers, String detail) {
    store.check("ledger", 5);
    RecordFence.Outcome<String, String> out = fence().filter(new Records()
        .add("t", 0, "bad", headers).fenced("ledger", "5", "good").build());
    assertThat(Records.values(out.accepted())).containsExactly("good");
    assertThat(out.quarantined()).singleElement().satisfies(q -> {
      assertThat(q.reason()).isEqualTo(Rejection.MALFORMED_TOKEN);
      assertThat(q.detail()).contains(detail);
      assertThat(q.lockLabel()).isEqualTo("ledger");
    });
    assertThat(store.current("ledger")).isEqualTo(5);
    assertThat(metrics.rejections("ledger", Rejection.MALFORMED_TOKEN)).isEqualTo(1);
  }

  @Test
  void missingTokenIsQuarantinedByDefaultAndPassesWhenConfigured() {
    ConsumerRecords<String, String> batch = new Records().add("t", 0, "plain").add("t", 0, "lock-only",
        "fencing-lock", "ledger").build();
    RecordFence.Outcome<String, String> quarantined = fence().filter(batch);
    assertThat(quarantined.accepted().isEmpty()).isTrue();
    assertThat(quarantined.quarantined()).extracting(Quarantine::reason)
        .containsExactly(Rejection.MISSING_TOKEN, Rejection.MISSING_TOKEN);
    assertThat(metrics.rejections("ledger", Rejection.MISSING_TOKEN)).isEqualTo(2);

    RecordFence passing = fence(KafkaFenceSettings.MISSING, "pass");
    assertThat(Records.values(passing.filter(batch).accepted())).containsExactly("plain", "lock-only");
    // pass is for the missing token only: a stale or malformed one is still refused
    store.check("ledger", 5);
    assertThat(passing.filter(new Records().fenced("ledger", "4", "stale").fenced("ledger", "x", "bad").build())
        .accepted().isEmpty()).isTrue();
  }

  @Test
  void aLockTheFenceDoesNotGuardIsUnknown() {
    RecordFence fence = fence(KafkaFenceSettings.LOCKS, "ledger,payments");
    RecordFence.Outcome<String, String> out = fence.filter(new Records()
        .fenced("other", "5", "other-lock")
        .add("t", 0, "no-lock", "fencing-token", "5")
        .add("t", 0, "two-locks", "fencing-lock", "ledger", "fencing-lock", "ledger", "fencing-token", "5")
        .fenced("payments", "5", "ok")
        .build());
    assertThat(Records.values(out.accepted())).containsExactly("ok");
    assertThat(out.quarantined()).extracting(Quarantine::reason).containsOnly(Rejection.UNKNOWN_LOCK);
    assertThat(out.quarantined()).extracting(Quarantine::lockLabel).containsOnly("(unknown)");
    assertThat(metrics.rejections("(unknown)", Rejection.UNKNOWN_LOCK)).isEqualTo(3);
    assertThat(store.current("other")).isZero();
  }

  @Test
  void onlyTheConfiguredTopicsAreFenced() {
    RecordFence fence = fence(KafkaFenceSettings.TOPICS, "orders");
    RecordFence.Outcome<String, String> out = fence.filter(new Records()
        .add("orders", 0, "refused").add("audit", 0, "passes").build());
    assertThat(Records.values(out.accepted())).containsExactly("passes");
  }

  @Test
  void keepsNextOffsetsAndLeavesOutEmptiedPartitions() {
    store.check("ledger", 5);
    ConsumerRecords<String, String> batch = new Records()
        .add("t", 0, "stale", "fencing-lock", "ledger", "fencing-token", "4")
        .add("t", 1, "ok", "fencing-lock", "ledger", "fencing-token", "5")
        .build();
    ConsumerRecords<String, String> out = fence().filter(batch).accepted();
    assertThat(out.partitions()).containsExactly(new TopicPartition("t", 1));
    assertThat(out.nextOffsets()).isEqualTo(batch.nextOffsets());
    assertThat(out.count()).isEqualTo(1);
  }

  @Test
  void aFailingStoreQuarantinesWhatItWasNeededFor() {
    FenceStore down = new FenceStore() {
      @Override
      public Verdict check(String lock, long token, boolean strict) {
        throw new FenceStoreException("down", null);
      }

      @Override
      public long current(String lock) {
        throw new FenceStoreException("down", null);
      }
    };
    RecordFence.Outcome<String, String> out = fence(down).filter(new Records()
        .fenced("ledger", "5", "a").add("t", 0, "plain").build());
    assertThat(out.accepted().isEmpty()).isTrue();
    assertThat(out.quarantined()).extracting(Quarantine::reason)
        .containsExactly(Rejection.STORE_UNAVAILABLE, Rejection.MISSING_TOKEN);
    assertThat(metrics.rejections("ledger", Rejection.STORE_UNAVAILABLE)).isEqualTo(1);
  }

  @Test
  void aFailedAdvanceStillAcceptsTheTokenInForce() {
    FenceStore advanceFails = new FenceStore() {
      @Override
      public Verdict check(String lock, long token, boolean strict) {
        throw new FenceStoreException("lock timeout", null);
      }

      @Override
      public long current(String lock) {
        return 5;
      }
    };
    RecordFence.Outcome<String, String> out = fence(advanceFails).filter(new Records()
        .fenced("ledger", "5", "in-force").fenced("ledger", "6", "newer").build());
    assertThat(Records.values(out.accepted())).containsExactly("in-force");
    assertThat(out.quarantined()).singleElement()
        .satisfies(q -> assertThat(q.reason()).isEqualTo(Rejection.STORE_UNAVAILABLE));
  }

  @Test
  void aFenceOvertakenByAnotherConsumerDuringTheBatchMakesItsRecordsStale() {
    // Another consumer of the lock advances the shared store to 9 between this batch's read and its advance.
    FenceStore racing = new FenceStore() {
      @Override
      public Verdict check(String lock, long token, boolean strict) {
        store.check(lock, 9);
        return store.check(lock, token, strict);
      }

      @Override
      public long current(String lock) {
        return store.current(lock);
      }
    };
    store.check("ledger", 5);
    RecordFence.Outcome<String, String> out = fence(racing).filter(new Records()
        .fenced("ledger", "6", "a").fenced("ledger", "7", "b").build());
    assertThat(out.accepted().isEmpty()).isTrue();
    assertThat(out.quarantined()).extracting(Quarantine::current).containsExactly(9L, 9L);
    assertThat(store.current("ledger")).isEqualTo(9);
  }

  @Test
  void eachLockHasItsOwnFence() {
    RecordFence fence = fence(KafkaFenceSettings.LOCKS, "a,b");
    fence.filter(new Records().fenced("a", "10", "a10").fenced("b", "2", "b2").build());
    RecordFence.Outcome<String, String> out = fence.filter(new Records()
        .fenced("a", "9", "a9").fenced("b", "2", "b2").build());
    assertThat(Records.values(out.accepted())).containsExactly("b2");
    assertThat(metrics.rejections("a", Rejection.STALE_TOKEN)).isEqualTo(1);
    assertThat(metrics.rejections("b", Rejection.STALE_TOKEN)).isZero();
    assertThat(List.of(store.current("a"), store.current("b"))).containsExactly(10L, 2L);
  }
}
