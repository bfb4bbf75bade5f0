package dev.fencing.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.sql.FenceReset;
import dev.fencing.protocol.Rejection;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PostgresServer;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fence per (lock, topic, partition) with real consumers configured by properties only, a real broker (KRaft,
 * child JVM) and the JDBC store on a real PostgreSQL: a valid holder's records on another partition than its
 * successor's are delivered whatever the read order, the old holder's records appended to a partition after the new
 * holder's are refused, a consumer killed mid-batch gets the same verdicts again, a store outage makes the poll wait
 * (nothing dropped), and kafka-clients 3.x and the latest 4.x run the fence. Holders are plain producers setting the
 * headers an agent would (A: token 5, B: token 6).
 */
class KafkaPartitionFenceIT {

  private static final Duration WAIT = Duration.ofSeconds(90);
  private static KafkaBroker broker;
  private static PostgresServer postgres;
  private static KafkaProducer<String, String> producer;

  @BeforeAll
  static void start() throws Exception {
    broker = KafkaBroker.start();
    postgres = PostgresServer.start();
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl())) {
      // The SQL fence's table, as `sql install` creates it: an installation has it (fence reset writes it); the Kafka
      // fence creates its own table beside it.
      c.createStatement().execute("CREATE TABLE fencing_fence (lock_name varchar(128) PRIMARY KEY, "
          + "token bigint NOT NULL, updated_at timestamp)");
    }
    producer = new KafkaProducer<>(Map.of("bootstrap.servers", broker.bootstrapServers(), "linger.ms", 0),
        new StringSerializer(), new StringSerializer());
  }

  @AfterAll
  static void stop() {
    if (producer != null) {
      producer.close();
    }
    if (broker != null) {
      broker.close();
    }
    if (postgres != null) {
      postgres.close();
    }
  }

  /**
   * The measured case: A sent 50 records to partition 1 and stopped; B, with a higher token, sent 50 to
   * partition 0; a consumer reading partition 0 and then partition 1 got only B's 50 (A's were dropped as stale).
   */
  @Test
  void aValidHoldersRecordsOnAnotherPartitionAreDeliveredWhateverTheReadOrder() throws Exception {
    String topic = topic(3);
    String lock = "order-" + topic;
    List<String> expected = measuredScenario(topic, lock);
    List<String> got = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock, Map.of())) {
      for (int p : new int[] {0, 1}) {
        TopicPartition tp = new TopicPartition(topic, p);
        consumer.assign(List.of(tp));
        long end = consumer.endOffsets(List.of(tp)).get(tp);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (consumer.position(tp) < end) {
          assertThat(System.nanoTime()).as("partition " + p + " read").isLessThan(deadline);
          consumer.poll(Duration.ofMillis(200)).forEach(r -> got.add(r.value()));
        }
      }
    }
    assertThat(got).containsExactlyElementsOf(expected);
    assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN)).isEqualTo(1);
  }

  /** 50 of A (token 5) on partition 1, then 50 of B (token 6) and one stale record of A on partition 0. */
  private static List<String> measuredScenario(String topic, String lock) throws Exception {
    List<String> expected = new ArrayList<>();
    List<String> ofA = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      send(topic, 1, lock, "5", "A-" + i);
      ofA.add("A-" + i);
    }
    for (int i = 0; i < 50; i++) {
      send(topic, 0, lock, "6", "B-" + i);
      expected.add("B-" + i);
    }
    send(topic, 0, lock, "5", "A-stale-on-0");
    expected.addAll(ofA);
    return expected;
  }

  /** The records of a handover on a 3-partition topic, and which of them are valid. */
  private record Handover(List<String> valid, List<String> stale) {
    Set<String> all() {
      Set<String> s = new HashSet<>(valid);
      s.addAll(stale);
      return s;
    }
  }

  /**
   * A writes to all three partitions; B takes over and writes to partitions 0 and 1 while A, stalled, still has
   * records in flight: A's records land after B's on 0 and 1 (stale) and before any of B's on 2 (valid: Kafka gives
   * no order across partitions); then B writes to 2 and A's last records there are stale too.
   */
  private static Handover handover(String topic, String lock) throws Exception {
    List<String> valid = new ArrayList<>();
    List<String> stale = new ArrayList<>();
    for (int p = 0; p < 3; p++) {
      for (int i = 0; i < 10; i++) {
        valid.add(send(topic, p, lock, "5", "A-" + p + "-" + i));
      }
    }
    for (int i = 0; i < 10; i++) {
      valid.add(send(topic, 0, lock, "6", "B-0-" + i));
      valid.add(send(topic, 1, lock, "6", "B-1-" + i));
    }
    for (int i = 0; i < 10; i++) {
      stale.add(send(topic, 0, lock, "5", "A-late-0-" + i));
      stale.add(send(topic, 1, lock, "5", "A-late-1-" + i));
      valid.add(send(topic, 2, lock, "5", "A-inflight-2-" + i));
    }
    for (int i = 0; i < 10; i++) {
      valid.add(send(topic, 2, lock, "6", "B-2-" + i));
      valid.add(send(topic, 1, lock, "6", "B-1-more-" + i));
    }
    for (int i = 0; i < 5; i++) {
      stale.add(send(topic, 2, lock, "5", "A-late-2-" + i));
    }
    producer.flush();
    return new Handover(valid, stale);
  }

  /** Two groups, small batches mixing partitions: each gets every valid record and none of the stale ones. */
  @Test
  void aHandoverWithRecordsInFlightOnSeveralPartitionsRefusesOnlyTheStaleOnes() throws Exception {
    String topic = topic(3);
    String lock = "handover-" + topic;
    Handover h = handover(topic, lock);
    for (String group : List.of("g1-" + topic, "g2-" + topic)) {
      try (KafkaConsumer<String, String> consumer = consumer(group, lock, Map.of("max.poll.records", "7"))) {
        consumer.subscribe(List.of(topic));
        List<String> got = drain(consumer, h.valid().size());
        assertThat(got).containsExactlyInAnyOrderElementsOf(h.valid());
      }
    }
    assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN)).isEqualTo(2L * h.stale().size());
  }

  /**
   * A consumer JVM killed with SIGKILL in the middle of a batch (its offsets committed after each batch) and started
   * again: the records it had been handed and not committed are redelivered with the same verdict, no valid record is
   * lost and no stale one gets through in either run.
   */
  @Test
  void aConsumerKilledMidBatchGetsTheSameVerdictsAfterItsRestart() throws Exception {
    String topic = topic(3);
    String lock = "crash-" + topic;
    Handover h = handover(topic, lock);
    String group = "g-" + topic;
    String first;
    try (AgentJvm consumer = fork("crash-1", clientsClasspath(null), topic, group, lock, "subscribe:15:20")) {
      long deadline = System.nanoTime() + WAIT.toNanos();
      // Killed with at least 2 records of a batch handed over and 2 still to come: well before its commit.
      while (!midBatch(consumer.output(), 40)) {
        assertThat(System.nanoTime()).as("40 records delivered\n" + consumer.output()).isLessThan(deadline);
        Thread.sleep(5);
      }
      consumer.process().destroyForcibly().waitFor();
      first = consumer.output();
    }
    List<String> run1 = FencedConsumerMain.delivered(first);
    assertThat(run1.size()).isLessThan(h.valid().size());
    try (AgentJvm consumer = fork("crash-2", clientsClasspath(null), topic, group, lock, "subscribe:15:0")) {
      long deadline = System.nanoTime() + WAIT.toNanos();
      Set<String> union = new HashSet<>(run1);
      while (!union.containsAll(h.valid())) {
        assertThat(System.nanoTime()).as("all valid records delivered\n" + consumer.output()).isLessThan(deadline);
        Thread.sleep(100);
        union.addAll(FencedConsumerMain.delivered(consumer.output()));
      }
      Thread.sleep(1000); // anything else it would deliver
      List<String> run2 = FencedConsumerMain.delivered(consumer.output());
      union.addAll(run2);
      assertThat(union).containsExactlyInAnyOrderElementsOf(h.valid());
      assertThat(run1).doesNotContainAnyElementsOf(h.stale());
      assertThat(run2).doesNotContainAnyElementsOf(h.stale());
      Set<String> redelivered = new LinkedHashSet<>(run1);
      redelivered.retainAll(new HashSet<>(run2));
      assertThat(redelivered).as("records handed over before the kill and not committed, delivered again")
          .isNotEmpty();
      assertThat(run1.subList(run1.size() - redelivered.size(), run1.size())).containsExactlyInAnyOrderElementsOf(
          redelivered);
    }
  }

  /**
   * PostgreSQL stopped while the consumer polls: the poll waits (no record handed over, none dropped or quarantined as
   * store-unavailable), and when the database is back every valid record arrives and every stale one is refused.
   */
  @Test
  void aStoreOutageMakesThePollWaitAndDropsNothing() throws Exception {
    String topic = topic(3);
    String lock = "outage-" + topic;
    List<String> got = Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean run = new AtomicBoolean(true);
    List<Throwable> failure = Collections.synchronizedList(new ArrayList<>());
    long failuresBefore = KafkaFenceMetrics.global().storeFailures();
    Thread poller = new Thread(() -> {
      try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock,
          Map.of(KafkaFenceSettings.JDBC_URL, postgres.jdbcUrl() + "&connectTimeout=2&socketTimeout=5"))) {
        consumer.subscribe(List.of(topic));
        while (run.get()) {
          consumer.poll(Duration.ofMillis(100)).forEach(r -> got.add(r.value()));
          consumer.commitSync();
        }
      } catch (Throwable t) {
        failure.add(t);
      }
    }, "outage-consumer");
    poller.start();
    try {
      List<String> valid = new ArrayList<>();
      for (int p = 0; p < 3; p++) {
        valid.add(send(topic, p, lock, "5", "before-" + p));
      }
      await(() -> got.size() == 3, "the first records");
      postgres.stop();
      List<String> stale = new ArrayList<>();
      for (int p = 0; p < 3; p++) {
        valid.add(send(topic, p, lock, "6", "during-B-" + p));
        stale.add(send(topic, p, lock, "5", "during-A-stale-" + p));
        valid.add(send(topic, p, lock, "6", "during-B2-" + p));
      }
      Thread.sleep(4000);
      assertThat(got).as("nothing is handed over while the store is down").hasSize(3);
      assertThat(KafkaFenceMetrics.global().storeFailures()).isGreaterThan(failuresBefore);
      postgres.restart();
      await(() -> got.size() >= valid.size(), "the records after the outage");
      Thread.sleep(500);
      assertThat(got).containsExactlyInAnyOrderElementsOf(valid).doesNotContainAnyElementsOf(stale);
      assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STORE_UNAVAILABLE)).isZero();
      assertThat(KafkaFenceMetrics.global().rejections(lock, Rejection.STALE_TOKEN)).isEqualTo(3);
    } finally {
      postgres.restart();
      run.set(false);
      poller.join(30_000);
    }
    assertThat(failure).isEmpty();
  }

  /**
   * {@code fence reset} repairs a partition poisoned by a huge token (no signing key): it lowers the lock's Kafka
   * fence with its SQL fence row, and the consumer follows at once.
   */
  @Test
  void fenceResetLowersAPoisonedPartition() throws Exception {
    String topic = topic(3);
    String lock = "reset-" + topic;
    try (KafkaConsumer<String, String> consumer = consumer("g-" + topic, lock, Map.of())) {
      consumer.subscribe(List.of(topic));
      send(topic, 0, lock, "7", "holder");
      send(topic, 0, lock, "999999999", "poison");
      send(topic, 0, lock, "7", "locked-out");
      send(topic, 1, lock, "7", "other-partition");
      assertThat(drain(consumer, 3)).containsExactlyInAnyOrder("holder", "poison", "other-partition");
      try (Connection c = DriverManager.getConnection(postgres.jdbcUrl())) {
        FenceReset.set(c, null, lock, 7, true);
      }
      send(topic, 0, lock, "7", "after-reset");
      assertThat(drain(consumer, 1)).containsExactly("after-reset");
    }
  }

  /**
   * The oldest supported 3.x (whose ConsumerRecords has no nextOffsets) and the newest 4.x run the fence, in a child
   * JVM with only that kafka-clients: the measured scenario delivers all 100 records and the stale one is refused.
   */
  @ParameterizedTest(name = "kafka-clients {0}")
  @ValueSource(strings = {"oldest", "latest"})
  void theFenceRunsOnTheOldestAndNewestSupportedClients(String which) throws Exception {
    String version = System.getProperty("fencing.it.kafka.clients." + which);
    assertThat(version).as("fencing.it.kafka.clients." + which + " (set by this module's failsafe configuration: run "
        + "the ITs through mvn verify)").isNotNull();
    String topic = topic(3);
    String lock = "clients-" + topic;
    List<String> expected = measuredScenario(topic, lock);
    producer.flush();
    try (AgentJvm consumer = fork("clients-" + version, clientsClasspath(version), topic, "g-" + topic, lock,
        "order:0,1")) {
      assertThat(consumer.output()).contains("CONSUMER STARTED kafka-clients " + version);
      consumer.awaitOutput("DONE", WAIT);
      assertThat(FencedConsumerMain.delivered(consumer.output())).as(consumer.output())
          .containsExactlyElementsOf(expected);
      assertThat(consumer.output()).doesNotContain("NoSuchMethodError").doesNotContain("Exception");
    }
  }

  // --- helpers ---

  private static int topics;

  private static String topic(int partitions) {
    String name = "pfence-" + (++topics) + "-" + UUID.randomUUID().toString().substring(0, 8);
    broker.createTopic(name, partitions);
    return name;
  }

  private static KafkaConsumer<String, String> consumer(String group, String lock, Map<String, Object> extra) {
    Map<String, Object> config = new HashMap<>();
    config.put("bootstrap.servers", broker.bootstrapServers());
    config.put("group.id", group);
    config.put("auto.offset.reset", "earliest");
    config.put("enable.auto.commit", "false");
    config.put("key.deserializer", StringDeserializer.class.getName());
    config.put("value.deserializer", StringDeserializer.class.getName());
    config.put("interceptor.classes", FencingConsumerInterceptor.class.getName());
    config.put(KafkaFenceSettings.LOCKS, lock);
    config.put(KafkaFenceSettings.JDBC_URL, postgres.jdbcUrl());
    config.putAll(extra);
    return new KafkaConsumer<>(config);
  }

  private static String send(String topic, int partition, String lock, String token, String value) throws Exception {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, partition, "k", value);
    r.headers().add(FencingHeaders.FENCING, (token + ";" + lock).getBytes(StandardCharsets.UTF_8));
    producer.send(r).get();
    return value;
  }

  /** Polls (committing) until {@code expected} records arrived and the consumer is at the end of its partitions. */
  private static List<String> drain(KafkaConsumer<String, String> consumer, int expected) {
    List<String> got = new ArrayList<>();
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (got.size() < expected || !caughtUp(consumer)) {
      assertThat(System.nanoTime()).as("consumer caught up, got " + got).isLessThan(deadline);
      for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
        got.add(r.value());
      }
      consumer.commitSync();
    }
    return got;
  }

  private static boolean caughtUp(KafkaConsumer<String, String> consumer) {
    Set<TopicPartition> assigned = consumer.assignment();
    if (assigned.isEmpty()) {
      return false;
    }
    Map<TopicPartition, Long> end = consumer.endOffsets(assigned);
    return assigned.stream().allMatch(tp -> consumer.position(tp) >= end.get(tp));
  }

  /** At least {@code min} records delivered, the last batch has 2 of them and at least 2 more to go. */
  private static boolean midBatch(String output, int min) {
    String[] lines = output.split("\n");
    int delivered = 0;
    int batch = 0;
    int inBatch = 0;
    for (String line : lines) {
      if (line.startsWith("BATCH ")) {
        batch = Integer.parseInt(line.substring(6).trim());
        inBatch = 0;
      } else if (line.startsWith("DELIVERED ")) {
        delivered++;
        inBatch++;
      }
    }
    return delivered >= min && inBatch >= 2 && batch - inBatch >= 2;
  }

  private static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  /**
   * This test JVM's class path with its kafka-clients jar replaced by {@code version}'s (as
   * testing/library-versions resolved it); null keeps the module's own.
   */
  private static String clientsClasspath(String version) {
    List<String> entries = new ArrayList<>(Arrays.asList(System.getProperty("java.class.path")
        .split(File.pathSeparator)));
    if (version == null) {
      return String.join(File.pathSeparator, entries);
    }
    Path jar = Path.of(System.getProperty("fencing.it.library.versions"), "kafka-clients-" + version, "target", "jars",
        "kafka-clients-" + version + ".jar");
    assertThat(Files.isReadable(jar)).as(jar + " (build testing/library-versions first: mvn install)").isTrue();
    List<String> kept = entries.stream().filter(e -> !Path.of(e).getFileName().toString().startsWith("kafka-clients-"))
        .collect(Collectors.toList());
    assertThat(kept).as("the module's kafka-clients jar on the class path").hasSize(entries.size() - 1);
    kept.add(jar.toString());
    return String.join(File.pathSeparator, kept);
  }

  private static AgentJvm fork(String name, String classpath, String topic, String group, String lock, String mode) {
    AgentJvm jvm = AgentJvm.builder().noAgent().name(name).classpath(classpath)
        .mainClass(FencedConsumerMain.class.getName())
        .args(broker.bootstrapServers(), topic, group, postgres.jdbcUrl(), lock, mode).start();
    jvm.awaitOutput("CONSUMER STARTED", WAIT);
    return jvm;
  }
}
