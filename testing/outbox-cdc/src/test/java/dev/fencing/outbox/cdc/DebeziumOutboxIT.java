package dev.fencing.outbox.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.fence.kafka.FencingConsumerInterceptor;
import dev.fencing.fence.kafka.KafkaFenceMetrics;
import dev.fencing.fence.kafka.KafkaFenceSettings;
import dev.fencing.fence.sql.OutboxInstaller;
import dev.fencing.fence.sql.SqlOutbox;
import dev.fencing.fence.sql.TableName;
import dev.fencing.protocol.KafkaHeaderNames;
import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenGrammar;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PostgresServer;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
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
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The recipe of docs/reference/outbox.md, "With Debezium": the outbox table the SQL installer creates, captured by
 * Debezium's PostgreSQL connector (embedded engine, pgoutput, a real PostgreSQL 15 with wal_level=logical) through
 * the outbox event router configured as the recipe says, its records written to a real Kafka broker as a Kafka
 * Connect worker writes them (Kafka Connect's default header converter, {@link SimpleHeaderConverter}), and read
 * through the Kafka consumer fence. No relay runs: Debezium is the carrier.
 */
class DebeziumOutboxIT {

  private static final String LOCK = "payments";
  private static final String TOPIC = "payments";
  private static final String SLOT = "fencing_outbox";
  private static final Duration WAIT = Duration.ofSeconds(90);

  private static PostgresServer postgres;
  private static KafkaBroker broker;
  private static KafkaProducer<String, String> producer;

  @BeforeAll
  static void start() throws SQLException {
    postgres = PostgresServer.start("wal_level=logical", "max_replication_slots=4", "max_wal_senders=4");
    broker = KafkaBroker.start();
    broker.createTopic(TOPIC, 1);
    producer = new KafkaProducer<>(Map.of("bootstrap.servers", broker.bootstrapServers(), "linger.ms", 0,
        "acks", "all", "enable.idempotence", true), new StringSerializer(), new StringSerializer());
    try (Connection c = db()) {
      new OutboxInstaller(c).install(new SqlOutbox(TableName.parse("outbox"), LOCK));
    }
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
   * Holder A (token 5) commits an event; its successor B (token 7) sends a record directly and commits an event; A,
   * stale, cannot commit another. Debezium starts late (its slot kept the changes), so A's committed event reaches the
   * partition after B's direct record. The consumer with the outbox rule takes A's event with its headers, B's, and a
   * later one, each once, also when Kafka Connect delivers one twice; the plain rule refuses A's event as stale and
   * hands B's over twice. Rows deleted after their capture send nothing.
   */
  @Test
  void capturedEventsReachTheConsumerFenceWithTheirTokenHeaders() throws Exception {
    try (Connection c = db(); Statement s = c.createStatement()) {
      // What the connector would create with publication.autocreate.mode=filtered and at its first start; made
      // beforehand here so that the connector starts behind the commits, as after downtime.
      s.execute("CREATE PUBLICATION " + SLOT + " FOR TABLE public.outbox");
      s.execute("SELECT pg_create_logical_replication_slot('" + SLOT + "', 'pgoutput')");
    }
    String eventA = insert(5, "grant-a", "order-1", "A: payment captured");
    sendDirect(7, "grant-b", "order-1", "B: direct record");
    String eventB = insert(7, "grant-b", "order-1", "B: payment refunded");
    assertThatThrownBy(() -> insert(5, "grant-a", "order-1", "A: stale")).isInstanceOf(SQLException.class);

    String eventC;
    List<SourceRecord> captured = new CopyOnWriteArrayList<>();
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try (DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = DebeziumEngine
        .create(ChangeEventFormat.of(Connect.class))
        .using(connectorProperties())
        .notifying(event -> {
          SourceRecord r = event.record();
          send(r);
          captured.add(r);
        })
        .build()) {
      executor.execute(engine);
      awaitCaptured(captured, 2);
      // Kafka Connect delivers at least once: a worker that dies before committing its source offsets sends the
      // records since the last commit again.
      send(captured.get(1));
      try (Connection c = db(); Statement s = c.createStatement()) {
        s.executeUpdate("DELETE FROM outbox WHERE event_id IN ('" + eventA + "', '" + eventB + "')");
      }
      eventC = insert(7, "grant-b", "order-1", "B: order closed");
      awaitCaptured(captured, 3);
      assertThat(captured).extracting(r -> header(r, KafkaHeaderNames.EVENT_ID))
          .containsExactly(eventA, eventB, eventC);
    } finally {
      executor.shutdown();
      assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).as("engine stopped").isTrue();
    }

    List<ConsumerRecord<String, String>> outbox = consume("outbox-rule", Map.of(KafkaFenceSettings.OUTBOX, "dedupe"));
    assertThat(outbox).extracting(ConsumerRecord::value).containsExactly("B: direct record", "A: payment captured",
        "B: payment refunded", "B: order closed");
    ConsumerRecord<String, String> a = outbox.get(1);
    assertThat(a.key()).isEqualTo("order-1");
    assertThat(value(a, KafkaHeaderNames.EVENT_ID)).isEqualTo(eventA);
    // Each captured event carries the token in the one header the agent and the relay write, the row's fencing
    // column as it is, and none of the older form's headers.
    Map<String, String> expected = Map.of(eventA, TokenGrammar.kafkaValue(5, LOCK, "grant-a"),
        eventB, TokenGrammar.kafkaValue(7, LOCK, "grant-b"), eventC, TokenGrammar.kafkaValue(7, LOCK, "grant-b"));
    assertThat(fencingColumn(eventC)).isEqualTo(expected.get(eventC));
    for (ConsumerRecord<String, String> r : outbox.subList(1, 4)) {
      assertThat(r.headers().headers(KafkaHeaderNames.FENCING)).as(r.value()).singleElement()
          .extracting(h -> new String(h.value(), StandardCharsets.UTF_8))
          .isEqualTo(expected.get(value(r, KafkaHeaderNames.EVENT_ID)));
      for (String older : List.of(KafkaHeaderNames.LEGACY_TOKEN, KafkaHeaderNames.LEGACY_LOCK,
          KafkaHeaderNames.LEGACY_GRANT)) {
        assertThat(r.headers().headers(older)).as(r.value() + ": " + older).isEmpty();
      }
    }

    long staleBefore = KafkaFenceMetrics.global().rejections(LOCK, Rejection.STALE_TOKEN);
    List<ConsumerRecord<String, String>> plain = consume("plain-rule", Map.of());
    assertThat(plain).extracting(ConsumerRecord::value).containsExactly("B: direct record", "B: payment refunded",
        "B: payment refunded", "B: order closed");
    assertThat(KafkaFenceMetrics.global().rejections(LOCK, Rejection.STALE_TOKEN)).isEqualTo(staleBefore + 1);

    // Under CDC the rows' delivery state is not used: what was captured stays pending (nothing marks it).
    try (Connection c = db(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT state FROM outbox WHERE event_id = '" + eventC + "'")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString(1)).isEqualTo("pending");
    }
  }

  /** The connector and the router as docs/reference/outbox.md gives them, with this test's addresses. */
  private static Properties connectorProperties() {
    Properties p = new Properties();
    p.setProperty("name", "outbox-cdc");
    p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
    p.setProperty("offset.flush.interval.ms", "1000");
    p.setProperty("database.hostname", "127.0.0.1");
    p.setProperty("database.port", Integer.toString(postgres.port()));
    p.setProperty("database.user", postgres.user());
    p.setProperty("database.password", "");
    p.setProperty("database.dbname", "postgres");
    p.setProperty("topic.prefix", "cdc");
    p.setProperty("plugin.name", "pgoutput");
    p.setProperty("slot.name", SLOT);
    p.setProperty("publication.name", SLOT);
    p.setProperty("publication.autocreate.mode", "filtered");
    p.setProperty("table.include.list", "public.outbox");
    p.setProperty("snapshot.mode", "no_data");
    p.setProperty("transforms", "outbox");
    p.setProperty("transforms.outbox.type", "io.debezium.transforms.outbox.EventRouter");
    p.setProperty("transforms.outbox.table.field.event.id", "event_id");
    p.setProperty("transforms.outbox.table.field.event.key", "message_key");
    p.setProperty("transforms.outbox.table.field.event.payload", "payload");
    p.setProperty("transforms.outbox.route.by.field", "target");
    p.setProperty("transforms.outbox.route.topic.replacement", "${routedByValue}");
    p.setProperty("transforms.outbox.table.expand.json.payload", "false");
    p.setProperty("transforms.outbox.table.fields.additional.placement",
        "fencing:header:fencing,event_id:header:fencing-event-id");
    return p;
  }

  /** As a Kafka Connect worker writes a source record: topic, key, value, headers through SimpleHeaderConverter. */
  private static void send(SourceRecord r) {
    ProducerRecord<String, String> out = new ProducerRecord<>(r.topic(), (String) r.key(), (String) r.value());
    try (SimpleHeaderConverter converter = new SimpleHeaderConverter()) {
      converter.configure(Map.of());
      for (org.apache.kafka.connect.header.Header h : r.headers()) {
        out.headers().add(h.key(), converter.fromConnectHeader(r.topic(), h.key(), h.schema(), h.value()));
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    try {
      producer.send(out).get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("could not write the captured record to Kafka", e);
    }
  }

  /** A fenced application's direct record, tagged as the agent tags it. */
  private static void sendDirect(long token, String grant, String key, String value) throws Exception {
    ProducerRecord<String, String> r = new ProducerRecord<>(TOPIC, key, value);
    r.headers().add(KafkaHeaderNames.FENCING, bytes(TokenGrammar.kafkaValue(token, LOCK, grant)));
    producer.send(r).get(30, TimeUnit.SECONDS);
  }

  /** An event written in a transaction of the holder with {@code token}, as the agent sets the session; its id. */
  private static String insert(long token, String grant, String key, String payload) throws SQLException {
    try (Connection c = db()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement("SELECT set_config('fencing.lock', ?, true), "
          + "set_config('fencing.token', ?, true), set_config('fencing.grant', ?, true)")) {
        ps.setString(1, LOCK);
        ps.setString(2, Long.toString(token));
        ps.setString(3, grant);
        ps.execute();
      }
      String id;
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox (channel, target, message_key, payload) "
          + "VALUES ('kafka', ?, ?, ?) RETURNING event_id")) {
        ps.setString(1, TOPIC);
        ps.setString(2, key);
        ps.setString(3, payload);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          id = rs.getString(1);
        }
      }
      c.commit();
      return id;
    }
  }

  /** The outbox row's fencing column (the captured rows of A and B are deleted by then). */
  private static String fencingColumn(String eventId) throws SQLException {
    try (Connection c = db(); PreparedStatement ps = c.prepareStatement("SELECT fencing FROM outbox WHERE event_id = ?")) {
      ps.setString(1, eventId);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("event %s in the outbox", eventId).isTrue();
        return rs.getString(1);
      }
    }
  }

  private static void awaitCaptured(List<SourceRecord> captured, int n) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (captured.size() < n) {
      assertThat(System.nanoTime()).as("%d events captured within %s (got %d)", n, WAIT, captured.size())
          .isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  /** Every record of the topic, read by a new group through the fence (JDBC store in the same PostgreSQL). */
  private static List<ConsumerRecord<String, String>> consume(String group, Map<String, Object> extra) {
    Map<String, Object> config = new HashMap<>();
    config.put("bootstrap.servers", broker.bootstrapServers());
    config.put("group.id", group);
    config.put("auto.offset.reset", "earliest");
    config.put("enable.auto.commit", "false");
    config.put("key.deserializer", StringDeserializer.class.getName());
    config.put("value.deserializer", StringDeserializer.class.getName());
    config.put("interceptor.classes", FencingConsumerInterceptor.class.getName());
    config.put(KafkaFenceSettings.LOCKS, LOCK);
    config.put(KafkaFenceSettings.JDBC_URL, postgres.jdbcUrl());
    config.putAll(extra);
    List<ConsumerRecord<String, String>> got = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
      consumer.subscribe(List.of(TOPIC));
      long deadline = System.nanoTime() + WAIT.toNanos();
      do {
        assertThat(System.nanoTime()).as("consumer caught up within " + WAIT).isLessThan(deadline);
        consumer.poll(Duration.ofMillis(100)).forEach(got::add);
        consumer.commitSync();
      } while (!caughtUp(consumer));
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

  private static String header(SourceRecord r, String name) {
    org.apache.kafka.connect.header.Header h = r.headers().lastWithName(name);
    return h == null ? null : String.valueOf(h.value());
  }

  private static String value(ConsumerRecord<?, ?> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Connection db() throws SQLException {
    return DriverManager.getConnection(postgres.jdbcUrl());
  }
}
