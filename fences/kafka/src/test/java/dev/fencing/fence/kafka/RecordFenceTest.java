package dev.fencing.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.store.FenceStoreException;
import dev.fencing.protocol.Rejection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fence's decisions on real ConsumerRecords, with the in-memory store (or a failing or racing fake where said).
 * Unless a test says otherwise, its records are on partition t-0, each batch after the previous one in the log.
 */
class RecordFenceTest {

  private final MemoryStore store = new MemoryStore();
  private final KafkaFenceMetrics metrics = new KafkaFenceMetrics();

  private RecordFence fence(String... settings) {
    return fence(store, settings);
  }

  private RecordFence fence(PartitionFenceStore store, String... settings) {
    Map<String, Object> config = new HashMap<>();
    config.put(KafkaFenceSettings.LOCKS, "ledger");
    config.put(KafkaFenceSettings.STORE, "memory");
    for (int i = 0; i < settings.length; i += 2) {
      config.put(settings[i], settings[i + 1]);
    }
    return new RecordFence(KafkaFenceSettings.from(config), store, metrics, 1);
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
        : r.add("t", 0, value, "fencing", token + ";ledger;" + grant);
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
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.store.FenceState(5, "a1"));

    RecordFence.Outcome<String, String> second = fence.filter(granted(granted(granted(new Records(),
        "5", null, "no-grant"), "5", "c3", "other"), "5", "a1", "same").build());
    assertThat(Records.values(second.accepted())).containsExactly("same");
    assertThat(second.quarantined()).extracting(Quarantine::reason)
        .containsExactly(Rejection.REPLAYED_TOKEN, Rejection.REPLAYED_TOKEN);
    assertThat(metrics.rejections("ledger", Rejection.REPLAYED_TOKEN)).isEqualTo(3);
    assertThat(metrics.rejections("ledger", Rejection.STALE_TOKEN)).isZero();
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.store.FenceState(5, "a1"));

    // A higher token from the other grant advances; its grant counts from then on.
    RecordFence.Outcome<String, String> third = fence.filter(granted(granted(new Records(),
        "6", "b2", "b"), "6", "a1", "a-replay").build());
    assertThat(Records.values(third.accepted())).containsExactly("b");
    assertThat(third.quarantined()).extracting(Quarantine::reason).containsExactly(Rejection.REPLAYED_TOKEN);
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.store.FenceState(6, "b2"));
  }

  @Test
  void withoutAStoredGrantEqualTokensPassAsBefore() {
    RecordFence fence = fence();
    RecordFence.Outcome<String, String> out = fence.filter(granted(granted(granted(new Records(),
        "5", null, "a"), "5", "x", "b"), "5", "y", "c").build());
    assertThat(Records.values(out.accepted())).containsExactly("a", "b", "c");
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.store.FenceState(5, null));
  }

  @Test
  void aMalformedGrantIsAMalformedToken() {
    RecordFence fence = fence();
    Records r = new Records();
    r.add("t", 0, "long", "fencing", "5;ledger;" + "a".repeat(65));
    r.add("t", 0, "blank", "fencing", "5;ledger;a b");
    r.add("t", 0, "utf8", "fencing", "5;ledger;\u00e9t\u00e9");
    r.add("t", 0, "empty", "fencing", "5;ledger;");
    r.add("t", 0, "ok", "fencing", "4;ledger;!" + "x".repeat(63));
    RecordFence.Outcome<String, String> out = fence.filter(r.build());
    assertThat(Records.values(out.accepted())).containsExactly("ok");
    assertThat(out.quarantined()).hasSize(4).allSatisfy(q -> {
      assertThat(q.reason()).isEqualTo(Rejection.MALFORMED_TOKEN);
      assertThat(q.detail()).contains("grant in the fencing header").doesNotContain("Fencing-Grant");
      assertThat(q.lockLabel()).isEqualTo("ledger");
    });
    assertThat(store.current("ledger")).isEqualTo(4);
  }

  @Test
  void theOlderFormOfThreeHeadersIsReadWithTheSameRule() {
    RecordFence fence = fence();
    Records r = new Records();
    r.add("t", 0, "old-form", "fencing-lock", "ledger", "fencing-token", "5", "fencing-grant", "g5");
    r.add("t", 0, "old-form-replay", "fencing-lock", "ledger", "fencing-token", "5", "fencing-grant", "other");
    r.add("t", 0, "old-form-stale", "fencing-lock", "ledger", "fencing-token", "4");
    r.add("t", 0, "old-form-bad", "fencing-lock", "ledger", "fencing-token", "5", "fencing-token", "5");
    r.add("t", 0, "old-form-bad-grant", "fencing-lock", "ledger", "fencing-token", "5", "fencing-grant", "a b");
    r.add("t", 0, "new-form", "fencing", "6;ledger;g6");
    RecordFence.Outcome<String, String> out = fence.filter(r.build());
    assertThat(Records.values(out.accepted())).containsExactly("old-form", "new-form");
    assertThat(out.quarantined()).extracting(Quarantine::reason).containsExactly(Rejection.REPLAYED_TOKEN,
        Rejection.STALE_TOKEN, Rejection.MALFORMED_TOKEN, Rejection.MALFORMED_TOKEN);
    assertThat(out.quarantined()).extracting(Quarantine::detail).element(2).asString()
        .contains("2 fencing-token headers");
    assertThat(out.quarantined()).extracting(Quarantine::detail).element(3).asString().contains("fencing-grant");
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.store.FenceState(6, "g6"));
  }

  @Test
  void aRecordCarryingBothFormsIsMalformedAndNeverMovesTheFence() {
    store.check("ledger", 5);
    RecordFence.Outcome<String, String> out = fence().filter(new Records()
        .add("t", 0, "both", "fencing", "9;ledger", "fencing-token", "9", "fencing-lock", "ledger")
        .add("t", 0, "both-grant", "fencing", "9;ledger;g", "fencing-grant", "g")
        .add("t", 0, "both-disagreeing", "fencing", "9;ledger", "fencing-token", "4", "fencing-lock", "ledger")
        .fenced("ledger", "5", "good").build());
    assertThat(Records.values(out.accepted())).containsExactly("good");
    assertThat(out.quarantined()).hasSize(3).allSatisfy(q -> {
      assertThat(q.reason()).isEqualTo(Rejection.MALFORMED_TOKEN);
      assertThat(q.lockLabel()).isEqualTo("ledger");
      assertThat(q.detail()).contains("both a fencing header and a fencing-").contains("of the older form")
          .contains("<token>;<lock>[;<grant>]");
    });
    assertThat(store.current("ledger")).isEqualTo(5);
    assertThat(metrics.rejections("ledger", Rejection.MALFORMED_TOKEN)).isEqualTo(3);
  }

  @Test
  void aFencingValueWithoutItsLockNamesTheForm() {
    RecordFence.Outcome<String, String> out = fence().filter(new Records()
        .add("t", 0, "token-only", "fencing", "5").add("t", 0, "empty", "fencing", "").build());
    assertThat(out.quarantined()).extracting(Quarantine::reason)
        .containsExactly(Rejection.UNKNOWN_LOCK, Rejection.MALFORMED_TOKEN);
    assertThat(out.quarantined()).extracting(Quarantine::detail).allSatisfy(d -> assertThat(d)
        .contains("fencing header").contains("<token>;<lock>[;<grant>]"));
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
    duplicated.add("fencing", "9;ledger".getBytes());
    duplicated.add("fencing", "9;ledger".getBytes());
    RecordHeaders nullValue = new RecordHeaders();
    nullValue.add("fencing", null);
    RecordHeaders huge = new RecordHeaders();
    huge.add("fencing", ("9".repeat(100_000) + ";ledger").getBytes());
    return Stream.of(
        Arguments.of("non-numeric", headers("abc"), "non-numeric"),
        Arguments.of("negative", headers("-9"), "negative"),
        Arguments.of("zero", headers("0"), "token 0"),
        Arguments.of("above int64", headers("9223372036854775808"), "above"),
        Arguments.of("empty", headers(""), "empty"),
        Arguments.of("duplicated header", duplicated, "2 fencing headers"),
        Arguments.of("oversized", huge, "oversized fencing header (100007 bytes)"),
        Arguments.of("oversized token", headers("9".repeat(65)), "oversized token in the fencing header"),
        Arguments.of("20 digits", headers("10000000000000000000"), "oversized token"),
        Arguments.of("null value", nullValue, "empty"),
        Arguments.of("signed", headers("+9"), "signed"),
        Arguments.of("leading zero", headers("09"), "leading zero"),
        Arguments.of("comma-joined", headers("9,9"), "several tokens"),
        Arguments.of("non-ASCII digits", headers("٩"), "non-numeric"));
  }

  private static RecordHeaders headers(String token) {
    RecordHeaders h = new RecordHeaders();
    h.add("fencing", (token + ";ledger").getBytes(java.nio.charset.StandardCharsets.UTF_8));
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
        .add("t", 0, "no-lock", "fencing", "5")
        .add("t", 0, "two-locks", "fencing", "5;ledger,ledger")
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
        .add("t", 0, "stale", "fencing", "4;ledger")
        .add("t", 1, "ok", "fencing", "5;ledger")
        .build();
    ConsumerRecords<String, String> out = fence().filter(batch).accepted();
    assertThat(out.partitions()).containsExactly(new TopicPartition("t", 1));
    assertThat(out.nextOffsets()).isEqualTo(batch.nextOffsets());
    assertThat(out.count()).isEqualTo(1);
  }

  /** A store that fails its first {@code failures} calls of each kind with a FenceStoreException. */
  private PartitionFenceStore failing(int readFailures, int writeFailures) {
    AtomicInteger reads = new AtomicInteger();
    AtomicInteger writes = new AtomicInteger();
    return new PartitionFenceStore() {
      @Override
      public List<Advance> advances(String lock, String topic, int partition, long from, long to) {
        if (reads.getAndIncrement() < readFailures) {
          throw new FenceStoreException("database down", null);
        }
        return store.advances(lock, topic, partition, from, to);
      }

      @Override
      public Advance record(String lock, String topic, int partition, Advance advance) {
        if (writes.getAndIncrement() < writeFailures) {
          throw new FenceStoreException("lock timeout", null);
        }
        return store.record(lock, topic, partition, advance);
      }

      @Override
      public Position firstCopy(String lock, String eventId, Position here) {
        return store.firstCopy(lock, eventId, here);
      }
    };
  }

  @Test
  void aFailingStoreMakesThePollWaitAndNothingIsDecidedWithoutIt() {
    RecordFence.Outcome<String, String> out = fence(failing(3, 0)).filter(new Records()
        .fenced("ledger", "5", "a").add("t", 0, "plain").build());
    assertThat(Records.values(out.accepted())).containsExactly("a");
    assertThat(out.quarantined()).extracting(Quarantine::reason).containsExactly(Rejection.MISSING_TOKEN);
    assertThat(metrics.storeFailures()).isEqualTo(3);
    assertThat(metrics.rejections("ledger", Rejection.STORE_UNAVAILABLE)).isZero();
    assertThat(store.current("ledger")).isEqualTo(5);
  }

  @Test
  void aFailingAdvanceIsRetriedUntilStored() {
    store.check("ledger", 5);
    RecordFence.Outcome<String, String> out = fence(failing(0, 2)).filter(new Records()
        .fenced("ledger", "5", "in-force").fenced("ledger", "6", "newer").fenced("ledger", "5", "stale").build());
    assertThat(Records.values(out.accepted())).containsExactly("in-force", "newer");
    assertThat(out.quarantined()).extracting(Quarantine::reason).containsExactly(Rejection.STALE_TOKEN);
    assertThat(metrics.storeFailures()).isEqualTo(2);
    assertThat(store.current("ledger")).isEqualTo(6);
  }

  @Test
  void anInterruptDoesNotEndTheWaitAndIsKept() {
    Thread.currentThread().interrupt();
    try {
      RecordFence.Outcome<String, String> out = fence(failing(2, 0)).filter(new Records()
          .fenced("ledger", "5", "a").build());
      assertThat(Records.values(out.accepted())).containsExactly("a");
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  /** The measured case: the fence keeps no order across partitions, since Kafka has none. */
  @Test
  void aValidHoldersRecordsOnAnotherPartitionPassWhateverTheReadOrder() {
    RecordFence fence = fence();
    Records batch = new Records();
    for (int i = 0; i < 3; i++) {
      batch.add("t", 0, "b" + i, "fencing", "6;ledger");
    }
    for (int i = 0; i < 3; i++) {
      batch.add("t", 1, "a" + i, "fencing", "5;ledger");
    }
    assertThat(Records.values(fence.filter(batch.build()).accepted()))
        .containsExactly("b0", "b1", "b2", "a0", "a1", "a2");
    // After the newer holder's record in the same partition, the old holder's records are stale.
    RecordFence.Outcome<String, String> next = fence.filter(new Records()
        .add("t", 0, "a-late", "fencing", "5;ledger")
        .add("t", 1, "b-on-1", "fencing", "6;ledger")
        .add("t", 1, "a-late-on-1", "fencing", "5;ledger")
        .build());
    assertThat(Records.values(next.accepted())).containsExactly("b-on-1");
    assertThat(next.quarantined()).extracting(q -> (Object) q.record().value()).containsExactly("a-late", "a-late-on-1");
    assertThat(next.quarantined()).allSatisfy(q -> assertThat(q.current()).isEqualTo(6));
  }

  private static Records log(Records r, String... tokenValue) {
    for (int i = 0; i < tokenValue.length; i += 2) {
      r.add("t", 2, tokenValue[i + 1], "fencing", tokenValue[i] + ";ledger");
    }
    return r;
  }

  @ParameterizedTest(name = "strict={0}")
  @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
  void aRecordReadAgainGetsTheVerdictItGotTheFirstTime(boolean strict) {
    String[] log = strict
        ? new String[] {"5", "a", "6", "b", "5", "a-stale", "7", "c", "6", "b-stale", "8", "d"}
        : new String[] {"5", "a", "5", "a2", "6", "b", "5", "a-stale", "6", "b2", "7", "c", "6", "b-stale"};
    List<String> valid = strict ? List.of("a", "b", "c", "d") : List.of("a", "a2", "b", "b2", "c");
    long base = new Records().nextOffset("t", 2);
    RecordFence fence = fence(KafkaFenceSettings.STRICT, Boolean.toString(strict));
    assertThat(Records.values(fence.filter(log(new Records(), log).build()).accepted())).isEqualTo(valid);
    // The whole batch again (a consumer restarted without committing), from the middle (a partial commit), and by
    // another consumer of the same store (another group, or the partition's next owner after a rebalance).
    assertThat(Records.values(fence.filter(log(new Records().at("t", 2, base), log).build()).accepted()))
        .isEqualTo(valid);
    RecordFence other = fence(KafkaFenceSettings.STRICT, Boolean.toString(strict));
    String[] tail = java.util.Arrays.copyOfRange(log, 4, log.length);
    assertThat(Records.values(other.filter(log(new Records().at("t", 2, base + 2), tail).build()).accepted()))
        .isEqualTo(valid.subList(2, valid.size()));
  }

  @Test
  void aRecordOlderThanThePartitionsOldestAdvanceIsJudgedByIt() {
    RecordFence fence = fence();
    long base = new Records().nextOffset("t", 3);
    // A group that started at the end of the partition judged offset base+10 first.
    assertThat(Records.values(fence.filter(new Records().at("t", 3, base + 10)
        .add("t", 3, "b-late", "fencing", "6;ledger").build()).accepted()))
        .containsExactly("b-late");
    // A group reading the older records later: what is older than the oldest advance is refused.
    RecordFence.Outcome<String, String> older = fence.filter(new Records().at("t", 3, base)
        .add("t", 3, "a", "fencing", "5;ledger")
        .add("t", 3, "b", "fencing", "6;ledger")
        .add("t", 3, "c", "fencing", "7;ledger")
        .add("t", 3, "b-after-c", "fencing", "6;ledger").build());
    assertThat(Records.values(older.accepted())).containsExactly("b", "c");
    assertThat(older.quarantined()).extracting(q -> (Object) q.record().value()).containsExactly("a", "b-after-c");
  }

  @Test
  void aRecordWhoseAdvanceAnotherConsumerStoredFirstIsAccepted() {
    PartitionFenceStore racing = new PartitionFenceStore() {
      @Override
      public List<Advance> advances(String lock, String topic, int partition, long from, long to) {
        return store.advances(lock, topic, partition, from, to); // read before the other consumer's advance
      }

      @Override
      public Advance record(String lock, String topic, int partition, Advance advance) {
        store.record(lock, topic, partition, advance); // the other consumer judged the same record first
        return store.record(lock, topic, partition, new Advance(advance.offset(), advance.token(), "other"));
      }

      @Override
      public Position firstCopy(String lock, String eventId, Position here) {
        return store.firstCopy(lock, eventId, here);
      }
    };
    RecordFence.Outcome<String, String> out = fence(racing).filter(new Records()
        .add("t", 0, "a", "fencing", "5;ledger;g1")
        .add("t", 0, "a2", "fencing", "5;ledger;g1").build());
    assertThat(Records.values(out.accepted())).containsExactly("a", "a2");
    assertThat(store.state("ledger")).isEqualTo(new dev.fencing.fence.store.FenceState(5, "g1"));
  }

  private static Records event(Records r, String topic, String token, String eventId, String value) {
    return r.add(topic, 0, value, "fencing", token + ";ledger", "fencing-event-id", eventId);
  }

  @Test
  void underTheOutboxRuleAnEarlierGrantsEventIsAcceptedOnceAndAHigherOneRaisesTheFence() {
    RecordFence fence = fence(KafkaFenceSettings.OUTBOX, "dedupe");
    RecordFence.Outcome<String, String> out = fence.filter(event(event(event(new Records()
        .fenced("ledger", "7", "direct-7"), "t", "5", "e1", "event-5"), "t", "5", "e1", "copy"), "t", "9", "e2",
        "event-9").fenced("ledger", "7", "direct-7-after").build());
    assertThat(Records.values(out.accepted())).containsExactly("direct-7", "event-5", "event-9");
    assertThat(out.quarantined()).singleElement().satisfies(q -> assertThat(q.reason())
        .isEqualTo(Rejection.STALE_TOKEN));
    assertThat(store.current("ledger")).isEqualTo(9);
    assertThat(metrics.rejections("ledger", Rejection.STALE_TOKEN)).isEqualTo(1);
    assertThat(metrics.duplicatesSkipped("ledger")).as("the copy of e1").isEqualTo(1);
  }

  @Test
  void theOutboxRuleAppliesOnlyToItsTopicsAndTheDefaultRuleJudgesEventsByTheirToken() {
    RecordFence scoped = fence(KafkaFenceSettings.OUTBOX, "dedupe", KafkaFenceSettings.OUTBOX_TOPICS, "events");
    RecordFence.Outcome<String, String> out = scoped.filter(event(event(new Records()
        .add("events", 0, "d", "fencing", "7;ledger")
        .fenced("ledger", "7", "direct"), "events", "5", "e1", "on-events"), "t", "5", "e2", "on-t").build());
    assertThat(Records.values(out.accepted())).containsExactly("d", "on-events", "direct");

    RecordFence plain = fence();
    RecordFence.Outcome<String, String> off = plain.filter(event(new Records(), "t", "5", "e3", "off").build());
    assertThat(off.accepted().isEmpty()).isTrue();
    assertThat(off.quarantined()).singleElement().satisfies(q -> assertThat(q.reason())
        .isEqualTo(Rejection.STALE_TOKEN));
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
