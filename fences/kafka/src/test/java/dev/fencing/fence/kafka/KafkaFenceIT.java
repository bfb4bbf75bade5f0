package dev.fencing.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenSignature;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PostgresServer;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The interceptor in real consumers, configured by properties only, against a real broker (KRaft, child JVM) and the
 * JDBC store on a real PostgreSQL 15. Producers are plain clients setting the fencing headers by hand, as the agent
 * would. Each test uses its own topics and lock names: the store and the metrics outlive a test.
 */
class KafkaFenceIT {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static KafkaBroker broker;
  private static PostgresServer postgres;
  private static KafkaProducer<String, String> producer;
  private static PrometheusMeterRegistry prometheus;

  @BeforeAll
  static void start() throws SQLException {
    broker = KafkaBroker.start();
    postgres = PostgresServer.start();
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement()) {
      // The SQL fence's table, as `sql install` (fences/sql) creates it.
      s.execute("CREATE TABLE fencing_fence (lock_name varchar(128) PRIMARY KEY, token bigint NOT NULL, "
          + "updated_at timestamp)");
    }
    producer = new KafkaProducer<>(Map.of("bootstrap.servers", broker.bootstrapServers(), "linger.ms", 0),
        new StringSerializer(), new StringSerializer());
    prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Metrics.addRegistry(prometheus);
  }

  @AfterAll
  static void stop() {
    if (producer != null) {
      producer.close();
    }
    if (prometheus != null) {
      Metrics.removeRegistry(prometheus);
    }
    if (broker != null) {
      broker.close();
    }
    if (postgres != null) {
      postgres.close();
    }
  }

  /** Both group protocols: the classic one and KIP-848's (another consumer implementation in the client). */
  @ParameterizedTest(name = "group.protocol={0}")
  @ValueSource(strings = {"classic", "consumer"})
  void staleRecordsAreDroppedAndCountedAlsoAfterTheConsumerRestarts(String protocol) throws Exception {
    String topic = topic(1);
    String lock = "restart-" + protocol;
    Map<String, Object> extra = Map.of("group.protocol", protocol);
    try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock, topic, extra)) {
      send(topic, 0, lock, "5", "a");
      send(topic, 0, lock, "5", "b");
      assertThat(drain(consumer)).containsExactly("a", "b");
      send(topic, 0, lock, "7", "c");
      send(topic, 0, lock, "5", "stale-1");
      send(topic, 0, lock, "7", "d");
      assertThat(drain(consumer)).containsExactly("c", "d");
    }
    assertThat(fenceRow(lock)).isEqualTo(7);
    assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN)).isEqualTo(1);

    // A new consumer instance of the same group: the fence is in PostgreSQL, not in the consumer.
    send(topic, 0, lock, "6", "stale-2");
    send(topic, 0, lock, "7", "e");
    send(topic, 0, lock, "8", "f");
    try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock, topic, extra)) {
      assertThat(drain(consumer)).containsExactly("e", "f");
    }
    assertThat(fenceRow(lock)).isEqualTo(8);
    assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN)).isEqualTo(2);

    String scrape = prometheus.scrape();
    assertThat(scrape).contains("fencing_fence_rejections_total{fence=\"kafka\",lock=\"" + lock + "\","
        + "reason=\"stale_token\"} 2.0");
    for (Rejection r : KafkaFenceMetrics.REASONS) {
      if (r != Rejection.STALE_TOKEN) {
        assertThat(scrape).contains("fencing_fence_rejections_total{fence=\"kafka\",lock=\"" + lock + "\",reason=\""
            + r.label() + "\"} 0.0");
      }
    }
    assertThat(scrape).contains("fencing_fence_dead_letters_total{fence=\"kafka\",lock=\"" + lock + "\","
        + "outcome=\"failed\"} 0.0");
    assertThat(KafkaFenceMetrics.global().prometheusText()).contains("fencing_fence_rejections_total{fence=\"kafka\","
        + "lock=\"" + lock + "\",reason=\"stale_token\"} 2\n");
  }

  /**
   * Token poisoning: with the signing key, a huge unsigned or forged token is quarantined before the store is asked,
   * so the fence stays where the legitimate holder left it and its signed records keep flowing.
   */
  @Test
  void withASigningKeyUnsignedAndForgedTokensAreQuarantinedAndTheFenceNeverMoves() throws Exception {
    String topic = topic(1);
    String lock = "signed";
    byte[] raw = "kafka signing key, 32 bytes long!".getBytes(StandardCharsets.US_ASCII);
    java.nio.file.Path keyFile = java.nio.file.Files.createTempFile("fencing", ".key");
    java.nio.file.Files.writeString(keyFile, java.util.Base64.getEncoder().encodeToString(raw) + "\n");
    TokenSignature key = TokenSignature.of(raw);
    String poison = Long.toString(Long.MAX_VALUE);
    dev.fencing.testing.Gen gen = new dev.fencing.testing.Gen(8_04L);
    List<String> malformed = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      malformed.add(gen.chars('A', 'z', 1, 60).replace('\\', '-').replace('[', '_'));
    }
    try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock, topic,
        Map.of(KafkaFenceSettings.SIGNING_KEY_FILE, keyFile.toString()))) {
      sendSigned(topic, lock, "5", key.sign(lock, 5), "a");
      sendSigned(topic, lock, poison, null, "unsigned-poison");
      sendSigned(topic, lock, poison, key.sign(lock, 5), "forged-poison");
      for (int i = 0; i < malformed.size(); i++) {
        sendSigned(topic, lock, "6", malformed.get(i), "malformed-" + i);
      }
      sendSigned(topic, lock, "6", key.sign(lock, 6), "b");
      assertThat(drain(consumer)).containsExactly("a", "b");
    } finally {
      java.nio.file.Files.deleteIfExists(keyFile);
    }
    assertThat(fenceRow(lock)).isEqualTo(6);
    assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.MISSING_SIGNATURE)).isEqualTo(1);
    assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.BAD_SIGNATURE)).isEqualTo(1 + malformed.size());
    assertThat(prometheus.scrape()).contains("fencing_fence_rejections_total{fence=\"kafka\",lock=\"" + lock
        + "\",reason=\"bad_signature\"} " + (1 + malformed.size()) + ".0");
  }

  /**
   * An etcd restored from a snapshot can give a new holder the old holder's token: records with the fence token but
   * another grant than the one that advanced the fence (or none while one is stored) are replayed, dead-lettered as
   * such, and never move the fence; the advancing grant's records keep flowing.
   */
  @Test
  void recordsWithTheFenceTokenFromAnotherGrantAreQuarantinedAsReplayed() throws Exception {
    String topic = topic(1);
    String dlq = topic + "-dlq";
    String lock = "replayed";
    Map<String, Object> extra = Map.of(KafkaFenceSettings.DLQ_TOPIC, dlq);
    try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock, topic, extra)) {
      sendGranted(topic, lock, "5", "694d8a3b1c2e0f11", "first");
      assertThat(drain(consumer)).containsExactly("first");
      sendGranted(topic, lock, "5", "694d8a3b1c2e0f99", "replay");
      sendGranted(topic, lock, "5", null, "no-grant");
      sendGranted(topic, lock, "5", "694d8a3b1c2e0f11", "same");
      assertThat(drain(consumer)).containsExactly("same");
    }
    Map<String, ConsumerRecord<String, String>> dead = new LinkedHashMap<>();
    for (ConsumerRecord<String, String> r : readAll(dlq, 2)) {
      dead.put(r.value(), r);
    }
    assertThat(dead.keySet()).containsExactly("replay", "no-grant");
    for (ConsumerRecord<String, String> r : dead.values()) {
      assertThat(header(r, DeadLetters.REJECTED)).isEqualTo("replayed-token");
      assertThat(header(r, DeadLetters.DETAIL)).contains("token 5 for lock 'replayed' was issued to another grant");
      assertThat(header(r, DeadLetters.CURRENT_TOKEN)).isEqualTo("5");
    }
    assertThat(header(dead.get("replay"), "fencing")).isEqualTo("5;" + lock + ";694d8a3b1c2e0f99");
    assertThat(fenceRow(lock)).isEqualTo(5);
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl());
        PreparedStatement ps = c.prepareStatement("SELECT grant_id FROM fencing_kafka_fence WHERE lock_name = ? "
            + "ORDER BY from_offset DESC")) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo("694d8a3b1c2e0f11");
      }
    }
    assertThat(prometheus.scrape()).contains("fencing_fence_rejections_total{fence=\"kafka\",lock=\"" + lock
        + "\",reason=\"replayed_token\"} 2.0", "fencing_fence_rejections_total{fence=\"kafka\",lock=\"" + lock
        + "\",reason=\"stale_token\"} 0.0");
  }

  private static void sendGranted(String topic, String lock, String token, String grant, String value)
      throws Exception {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, 0, "k-" + value, value);
    r.headers().add(FencingHeaders.FENCING, bytes(token + ";" + lock + (grant == null ? "" : ";" + grant)));
    producer.send(r).get();
  }

  @Test
  void anUnreadableSigningKeyFileFailsTheConsumerNamingTheSetting() {
    Map<String, Object> config = baseConfig("g-bad-key");
    config.put("interceptor.classes", FencingConsumerInterceptor.class.getName());
    config.put(KafkaFenceSettings.LOCKS, "ledger");
    config.put(KafkaFenceSettings.JDBC_URL, postgres.jdbcUrl());
    config.put(KafkaFenceSettings.SIGNING_KEY_FILE, "/nonexistent/fencing.key");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new KafkaConsumer<String, String>(config).close())
        .isInstanceOf(KafkaException.class)
        .satisfies(e -> assertThat(String.valueOf(e) + e.getCause()).contains(KafkaFenceSettings.SIGNING_KEY_FILE)
            .contains("/nonexistent/fencing.key"));
  }

  private static void sendSigned(String topic, String lock, String token, String signature, String value)
      throws Exception {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, 0, "k-" + value, value);
    r.headers().add(FencingHeaders.FENCING, bytes(token + ";" + lock));
    if (signature != null) {
      r.headers().add(FencingHeaders.SIGNATURE, bytes(signature));
    }
    producer.send(r).get();
  }

  @Test
  void theFenceFollowsThePartitionsWhenTheyAreReassigned() throws Exception {
    String topic = topic(2);
    String lock = "reassign";
    String group = "g-" + topic;
    KafkaConsumer<String, String> a = consumer(group, lock, topic, Map.of());
    KafkaConsumer<String, String> b = consumer(group, lock, topic, Map.of());
    boolean aOpen = true;
    try (b) {
      List<String> gotA = new ArrayList<>();
      List<String> gotB = new ArrayList<>();
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (a.assignment().size() != 1 || b.assignment().size() != 1) {
        assertThat(System.nanoTime()).as("both consumers get a partition").isLessThan(deadline);
        pollInto(a, gotA);
        pollInto(b, gotB);
      }
      int pa = a.assignment().iterator().next().partition();
      int pb = b.assignment().iterator().next().partition();

      // Each partition has its own fence: the old holder's record on b's partition is not stale because a has seen
      // the new token on its partition (Kafka orders records within a partition only); after the new holder's
      // record on b's partition it is.
      send(topic, pa, lock, "7", "new-on-a");
      drainBoth(a, gotA, b, gotB);
      send(topic, pb, lock, "5", "old-on-b");
      send(topic, pb, lock, "7", "new-on-b");
      send(topic, pb, lock, "5", "stale-on-b");
      drainBoth(a, gotA, b, gotB);
      assertThat(gotA).containsExactly("new-on-a");
      assertThat(gotB).containsExactly("old-on-b", "new-on-b");
      assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN)).isEqualTo(1);

      // a leaves: b takes over a's partition, and its fence with it (from the store).
      a.close();
      aOpen = false;
      send(topic, pa, lock, "6", "stale-on-a");
      send(topic, pa, lock, "8", "newer-on-a");
      deadline = System.nanoTime() + WAIT.toNanos();
      while (b.assignment().size() != 2) {
        assertThat(System.nanoTime()).as("b gets both partitions").isLessThan(deadline);
        pollInto(b, gotB);
      }
      gotB.addAll(drain(b));
      assertThat(gotB).containsExactly("old-on-b", "new-on-b", "newer-on-a");
      assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN)).isEqualTo(2);
      assertThat(fenceRow(lock)).isEqualTo(8);
    } finally {
      if (aOpen) {
        a.close();
      }
    }
  }

  @Test
  void quarantinedRecordsGoToTheDeadLetterTopicWithTheirReason() throws Exception {
    String topic = topic(1);
    String dlq = topic + "-dlq";
    String lock = "dlq";
    Map<String, Object> extra = Map.of(KafkaFenceSettings.DLQ_TOPIC, dlq);
    try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock, topic, extra)) {
      send(topic, 0, lock, "7", "ok");
      send(topic, 0, lock, "6", "stale");
      send(topic, 0, lock, "abc", "malformed");
      send(topic, 0, null, null, "missing");
      send(topic, 0, "elsewhere", "7", "unknown-lock");
      send(topic, 0, lock, "7", "ok-2");
      assertThat(drain(consumer)).containsExactly("ok", "ok-2");
    }
    Map<String, ConsumerRecord<String, String>> dead = new LinkedHashMap<>();
    for (ConsumerRecord<String, String> r : readAll(dlq, 4)) {
      dead.put(r.value(), r);
    }
    assertThat(dead.keySet()).containsExactly("stale", "malformed", "missing", "unknown-lock");
    assertThat(header(dead.get("stale"), DeadLetters.REJECTED)).isEqualTo("stale-token");
    assertThat(header(dead.get("stale"), DeadLetters.CURRENT_TOKEN)).isEqualTo("7");
    assertThat(header(dead.get("stale"), DeadLetters.DETAIL)).contains("token 6 for lock 'dlq' is lower than the "
        + "fence token 7");
    assertThat(header(dead.get("stale"), DeadLetters.SOURCE_TOPIC)).isEqualTo(topic);
    assertThat(header(dead.get("stale"), DeadLetters.SOURCE_PARTITION)).isEqualTo("0");
    assertThat(header(dead.get("stale"), DeadLetters.SOURCE_OFFSET)).isEqualTo("1");
    assertThat(header(dead.get("stale"), FencingHeaders.FENCING)).isEqualTo("6;dlq");   // the original headers stay
    assertThat(dead.get("stale").key()).isEqualTo("k-stale");
    assertThat(header(dead.get("malformed"), DeadLetters.REJECTED)).isEqualTo("malformed-token");
    assertThat(header(dead.get("missing"), DeadLetters.REJECTED)).isEqualTo("missing-token");
    assertThat(header(dead.get("unknown-lock"), DeadLetters.REJECTED)).isEqualTo("unknown-lock");
    assertThat(dead.get("malformed").headers().lastHeader(DeadLetters.CURRENT_TOKEN)).isNull();

    KafkaFenceMetrics m = KafkaFenceMetrics.global();
    assertThat(m.deadLetters(lock, true)).isEqualTo(4);
    assertThat(m.deadLetters(lock, false)).isZero();
    for (Rejection r : List.of(Rejection.STALE_TOKEN, Rejection.MALFORMED_TOKEN, Rejection.MISSING_TOKEN,
        Rejection.UNKNOWN_LOCK)) {
      assertThat(m.rejections(lock, r)).as(r.label()).isEqualTo(1);
    }
    assertThat(fenceRow(lock)).isEqualTo(7);
    assertThat(prometheus.scrape()).contains("fencing_fence_dead_letters_total{fence=\"kafka\",lock=\"dlq\","
        + "outcome=\"sent\"} 4.0");
  }

  @Test
  void malformedTokensAreQuarantinedAndNeverMoveTheFence() throws Exception {
    String topic = topic(1);
    String lock = "malformed";
    try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock, topic, Map.of())) {
      send(topic, 0, lock, "5", "first");
      assertThat(drain(consumer)).containsExactly("first");
      Map<String, List<byte[]>> kinds = new LinkedHashMap<>();
      kinds.put("non-numeric", List.of(bytes("12a")));
      kinds.put("negative", List.of(bytes("-9")));
      kinds.put("zero", List.of(bytes("0")));
      kinds.put("above-int64", List.of(bytes("9223372036854775808")));
      kinds.put("empty", List.of(bytes("")));
      kinds.put("duplicated", List.of(bytes("9"), bytes("9")));
      kinds.put("oversized", List.of(bytes("9".repeat(10_000))));
      kinds.forEach((kind, tokens) -> {
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, 0, "k", kind);
        tokens.forEach(t -> r.headers().add(FencingHeaders.FENCING, bytes(new String(t, StandardCharsets.UTF_8)
            + ";" + lock)));
        producer.send(r);
      });
      ProducerRecord<String, String> nullValue = new ProducerRecord<>(topic, 0, "k", "null-value");
      nullValue.headers().add(FencingHeaders.FENCING, null);
      producer.send(nullValue);
      // Both forms on one record, even agreeing: malformed. The older form alone is still read.
      ProducerRecord<String, String> both = new ProducerRecord<>(topic, 0, "k", "both-forms");
      both.headers().add(FencingHeaders.FENCING, bytes("9;" + lock)).add(FencingHeaders.LEGACY_TOKEN, bytes("9"))
          .add(FencingHeaders.LEGACY_LOCK, bytes(lock));
      producer.send(both);
      ProducerRecord<String, String> older = new ProducerRecord<>(topic, 0, "k", "older-form-accepted");
      older.headers().add(FencingHeaders.LEGACY_TOKEN, bytes("5")).add(FencingHeaders.LEGACY_LOCK, bytes(lock));
      producer.send(older);
      send(topic, 0, lock, "5", "still-accepted");
      assertThat(drain(consumer)).containsExactly("older-form-accepted", "still-accepted");
    }
    assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.MALFORMED_TOKEN)).isEqualTo(9);
    assertThat(fenceRow(lock)).isEqualTo(5);
  }

  @Test
  void anUnreachableDeadLetterTopicDoesNotStopTheConsumer() throws Exception {
    String topic = topic(1);
    String lock = "dlq-down";
    Map<String, Object> extra = Map.of(KafkaFenceSettings.DLQ_TOPIC, topic + "-dlq",
        KafkaFenceSettings.DLQ_TIMEOUT, "1000",
        KafkaFenceSettings.DLQ_PRODUCER_PREFIX + "bootstrap.servers", "127.0.0.1:" + closedPort());
    try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock, topic, extra)) {
      send(topic, 0, lock, "7", "ok");
      send(topic, 0, lock, "6", "stale");
      send(topic, 0, lock, "7", "ok-2");
      assertThat(drain(consumer)).containsExactly("ok", "ok-2");
    }
    assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN)).isEqualTo(1);
    assertThat(KafkaFenceMetrics.global().deadLetters(lock, false)).isEqualTo(1);
  }

  @Test
  void aConsumerWithoutLocksFailsAtConstructionNamingTheKey() {
    Map<String, Object> config = new HashMap<>(baseConfig("g-none"));
    config.put("interceptor.classes", FencingConsumerInterceptor.class.getName());
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new KafkaConsumer<>(config, new StringDeserializer(),
            new StringDeserializer()).close())
        .isInstanceOf(KafkaException.class)
        .rootCause().hasMessageContaining(KafkaFenceSettings.LOCKS);
  }

  /**
   * The outbox relay delivers a committed event of an earlier grant after the successor's direct records on the same
   * partition. The plain rule refuses it as stale; {@code fencing.fence.outbox=dedupe} hands it over with its headers,
   * while a direct record of that earlier grant after the successor's is still refused under both rules.
   */
  @Test
  void anOutboxEventOfAnEarlierGrantAfterASuccessorsRecordIsAcceptedUnderTheOutboxRuleOnly() throws Exception {
    String topic = topic(1);
    String lock = "outbox-order";
    sendGranted(topic, lock, "7", "g7", "direct-7");
    sendEvent(topic, lock, "5", "g5", "ev-5", "event-5");
    sendGranted(topic, lock, "5", "g5", "direct-5");
    sendGranted(topic, lock, "7", "g7", "direct-7b");

    long staleBefore = KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN);
    Map<String, ConsumerRecord<String, String>> outbox = new LinkedHashMap<>();
    try (KafkaConsumer<String, String> consumer = consumer("g-outbox-" + topic, lock, topic,
        Map.of(KafkaFenceSettings.OUTBOX, "dedupe"))) {
      drainRecords(consumer).forEach(r -> outbox.put(r.value(), r));
    }
    assertThat(outbox.keySet()).containsExactly("direct-7", "event-5", "direct-7b");
    ConsumerRecord<String, String> event = outbox.get("event-5");
    assertThat(header(event, FencingHeaders.FENCING)).isEqualTo("5;" + lock + ";g5");
    assertThat(header(event, FencingHeaders.EVENT_ID)).isEqualTo("ev-5");
    assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN)).isEqualTo(staleBefore + 1);

    try (KafkaConsumer<String, String> consumer = consumer("g-plain-" + topic, lock, topic, Map.of())) {
      assertThat(drain(consumer)).containsExactly("direct-7", "direct-7b");
    }
    assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN)).isEqualTo(staleBefore + 3);
    assertThat(fenceRow(lock)).isEqualTo(7);
  }

  /**
   * The relay delivers at least once: a second copy of an event (a relay killed between the send and the mark) is
   * skipped, once; the first copy is handed over again to a consumer that reads the partition again, and to another
   * group; and an outbox event with a higher token raises the fence against an older holder's direct records.
   */
  @Test
  void aSecondCopyOfAnOutboxEventIsSkippedAndTheFirstIsHandedOverEveryTimeItIsRead() throws Exception {
    String topic = topic(1);
    String lock = "outbox-dedupe";
    Map<String, Object> dedupe = Map.of(KafkaFenceSettings.OUTBOX, "dedupe");
    sendEvent(topic, lock, "9", "g9", "ev-1", "first-copy");
    sendGranted(topic, lock, "8", "g8", "direct-8");
    sendEvent(topic, lock, "9", "g9", "ev-1", "second-copy");
    sendEvent(topic, lock, "9", "g9", "ev-2", "next-event");
    try (KafkaConsumer<String, String> consumer = consumer("g-a-" + topic, lock, topic, dedupe)) {
      assertThat(drain(consumer)).containsExactly("first-copy", "next-event");
    }
    assertThat(fenceRow(lock)).isEqualTo(9);
    assertThat(KafkaFenceMetrics.global().duplicatesSkipped(lock)).isEqualTo(1);
    try (KafkaConsumer<String, String> consumer = consumer("g-b-" + topic, lock, topic, dedupe)) {
      assertThat(drain(consumer)).containsExactly("first-copy", "next-event");
    }
    assertThat(KafkaFenceMetrics.global().duplicatesSkipped(lock)).as("skipped again by the other group").isEqualTo(2);
    assertThat(KafkaFenceMetrics.global().prometheusText())
        .contains("\nfencing_fence_duplicates_skipped_total{fence=\"kafka\",lock=\"" + lock + "\"} 2\n");
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl());
        PreparedStatement ps = c.prepareStatement("SELECT event_id, record_offset FROM fencing_kafka_event "
            + "WHERE lock_name = ? ORDER BY record_offset")) {
      ps.setString(1, lock);
      List<String> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(rs.getString(1) + "@" + rs.getLong(2));
        }
      }
      assertThat(rows).containsExactly("ev-1@0", "ev-2@3");
    }
  }

  /**
   * The outbox rule trusts the event, not whatever carries an event id: the token, lock, grant and event id headers
   * are checked first, and a record naming a lock the consumer does not guard, a repeated or malformed event id, or
   * an event id without a token is refused and dead-lettered with its reason.
   */
  @Test
  void outboxRecordsWithAForgedLockOrBadHeadersAreRefused() throws Exception {
    String topic = topic(1);
    String dlq = topic + "-dlq";
    String lock = "outbox-forged";
    sendEvent(topic, "not-" + lock, "99", "g99", "ev-forged", "forged-lock");
    ProducerRecord<String, String> twice = new ProducerRecord<>(topic, 0, "k", "two-ids");
    twice.headers().add(FencingHeaders.FENCING, bytes("5;" + lock))
        .add(FencingHeaders.EVENT_ID, bytes("a")).add(FencingHeaders.EVENT_ID, bytes("b"));
    producer.send(twice).get();
    sendEvent(topic, lock, "5", "g5", "not an id", "bad-id");
    ProducerRecord<String, String> noToken = new ProducerRecord<>(topic, 0, "k", "no-token");
    noToken.headers().add(FencingHeaders.LEGACY_LOCK, bytes(lock)).add(FencingHeaders.EVENT_ID, bytes("ev-3"));
    producer.send(noToken).get();
    sendEvent(topic, lock, "5", "g5", "ev-ok", "valid");
    try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock, topic,
        Map.of(KafkaFenceSettings.OUTBOX, "dedupe", KafkaFenceSettings.DLQ_TOPIC, dlq))) {
      assertThat(drain(consumer)).containsExactly("valid");
    }
    Map<String, String> reasons = new LinkedHashMap<>();
    for (ConsumerRecord<String, String> r : readAll(dlq, 4)) {
      reasons.put(r.value(), header(r, DeadLetters.REJECTED));
    }
    assertThat(reasons).containsExactly(Map.entry("forged-lock", "unknown-lock"),
        Map.entry("two-ids", "malformed-token"), Map.entry("bad-id", "malformed-token"),
        Map.entry("no-token", "missing-token"));
    assertThat(fenceRow(lock)).isEqualTo(5);
  }

  /** A record as the outbox relay produces it: the row's token, lock and grant, and its event id. */
  private static void sendEvent(String topic, String lock, String token, String grant, String eventId, String value)
      throws Exception {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, 0, "order-1", value);
    r.headers().add(FencingHeaders.FENCING, bytes(token + ";" + lock + ";" + grant))
        .add(FencingHeaders.EVENT_ID, bytes(eventId));
    producer.send(r).get();
  }

  /** As {@link #drain}, the records themselves. */
  private static List<ConsumerRecord<String, String>> drainRecords(KafkaConsumer<String, String> consumer) {
    producer.flush();
    List<ConsumerRecord<String, String>> got = new ArrayList<>();
    long deadline = System.nanoTime() + WAIT.toNanos();
    do {
      assertThat(System.nanoTime()).as("consumer caught up within " + WAIT).isLessThan(deadline);
      consumer.poll(Duration.ofMillis(100)).forEach(got::add);
      consumer.commitSync();
    } while (!caughtUp(consumer));
    return got;
  }

  // --- helpers ---

  private static int topics;

  private static String topic(int partitions) {
    String name = "fenced-" + (++topics) + "-" + UUID.randomUUID().toString().substring(0, 8);
    broker.createTopic(name, partitions);
    return name;
  }

  private static Map<String, Object> baseConfig(String group) {
    Map<String, Object> config = new HashMap<>();
    config.put("bootstrap.servers", broker.bootstrapServers());
    config.put("group.id", group);
    config.put("auto.offset.reset", "earliest");
    config.put("enable.auto.commit", "false");
    config.put("key.deserializer", StringDeserializer.class.getName());
    config.put("value.deserializer", StringDeserializer.class.getName());
    return config;
  }

  /** A consumer with the fence enabled by properties alone, on the JDBC store in PostgreSQL. */
  private static KafkaConsumer<String, String> consumer(String group, String lock, String topic,
      Map<String, Object> extra) {
    Map<String, Object> config = baseConfig(group);
    config.put("interceptor.classes", FencingConsumerInterceptor.class.getName());
    config.put(KafkaFenceSettings.LOCKS, lock);
    config.put(KafkaFenceSettings.JDBC_URL, postgres.jdbcUrl());
    config.putAll(extra);
    KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config);
    consumer.subscribe(List.of(topic));
    return consumer;
  }

  private static void send(String topic, int partition, String lock, String token, String value) throws Exception {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, partition, "k-" + value, value);
    if (lock != null && token != null) {
      r.headers().add(FencingHeaders.FENCING, bytes(token + ";" + lock));
    } else if (lock != null) {
      r.headers().add(FencingHeaders.LEGACY_LOCK, bytes(lock)); // a lock without a token
    } else if (token != null) {
      r.headers().add(FencingHeaders.FENCING, bytes(token)); // a token without its lock
    }
    producer.send(r).get();
  }

  private static void pollInto(KafkaConsumer<String, String> consumer, List<String> into) {
    consumer.poll(Duration.ofMillis(100)).forEach(r -> into.add(r.value()));
    consumer.commitSync();
  }

  /** Polls (committing) until the consumer has an assignment and its position is at the end of every partition. */
  private static List<String> drain(KafkaConsumer<String, String> consumer) {
    producer.flush();
    List<String> got = new ArrayList<>();
    long deadline = System.nanoTime() + WAIT.toNanos();
    do {
      assertThat(System.nanoTime()).as("consumer caught up within " + WAIT).isLessThan(deadline);
      pollInto(consumer, got);
    } while (!caughtUp(consumer));
    return got;
  }

  private static void drainBoth(KafkaConsumer<String, String> a, List<String> gotA, KafkaConsumer<String, String> b,
      List<String> gotB) {
    producer.flush();
    long deadline = System.nanoTime() + WAIT.toNanos();
    do {
      assertThat(System.nanoTime()).as("consumers caught up within " + WAIT).isLessThan(deadline);
      pollInto(a, gotA);
      pollInto(b, gotB);
    } while (!caughtUp(a) || !caughtUp(b));
  }

  private static boolean caughtUp(KafkaConsumer<String, String> consumer) {
    Set<TopicPartition> assigned = consumer.assignment();
    if (assigned.isEmpty()) {
      return false;
    }
    Map<TopicPartition, Long> end = consumer.endOffsets(assigned);
    return assigned.stream().allMatch(tp -> consumer.position(tp) >= end.get(tp));
  }

  /** Every record of {@code topic} (at least {@code expected}), read with a plain consumer. */
  private static List<ConsumerRecord<String, String>> readAll(String topic, int expected) {
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(baseConfig("reader-" + UUID.randomUUID()))) {
      c.subscribe(List.of(topic));
      List<ConsumerRecord<String, String>> got = new ArrayList<>();
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (got.size() < expected || !caughtUp(c)) {
        assertThat(System.nanoTime()).as("records of " + topic).isLessThan(deadline);
        c.poll(Duration.ofMillis(100)).forEach(got::add);
      }
      return got;
    }
  }

  private static long fenceRow(String lock) throws SQLException {
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl());
        PreparedStatement ps = c.prepareStatement("SELECT MAX(token) FROM fencing_kafka_fence WHERE lock_name = ?")) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }

  private static String header(ConsumerRecord<String, String> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static int closedPort() throws java.io.IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
