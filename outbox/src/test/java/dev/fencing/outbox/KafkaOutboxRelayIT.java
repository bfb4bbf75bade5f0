package dev.fencing.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.protocol.KafkaHeaderNames;
import dev.fencing.protocol.OutboxSchema;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Kafka events from a real PostgreSQL outbox, consumed from a real broker with the relay's four headers. */
class KafkaOutboxRelayIT extends RelayTestBase {
  static PostgresServer postgres;
  static KafkaBroker kafka;

  @BeforeAll
  static void startServers() {
    postgres = PostgresServer.start();
    kafka = KafkaBroker.start();
  }

  @AfterAll
  static void stopServers() {
    if (kafka != null) {
      kafka.close();
    }
    if (postgres != null) {
      postgres.close();
    }
  }

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(postgres.jdbcUrl());
  }

  @Test
  void recordsArriveWithTheRowsTokenLockGrantAndEventIdInKeyOrder() throws Exception {
    String topic = "payments";
    kafka.createTopic(topic, 3);
    String table = newTable();
    List<String> ids = new ArrayList<>();
    transaction(9, "g-9", true, c -> {
      ids.add(Outbox.kafka(c, table, topic, "order-1", "created"));
      ids.add(Outbox.kafka(c, table, topic, "order-1", "paid"));
      ids.add(Outbox.kafka(c, table, topic, null, "no key"));
    });
    OutboxRelay relay = relay(table, b -> b.kafkaBootstrap(kafka.bootstrapServers()));

    List<ConsumerRecord<String, String>> records = consume(topic, 3);
    assertThat(records).extracting(ConsumerRecord::value).containsExactlyInAnyOrder("created", "paid", "no key");
    assertThat(records.stream().filter(r -> "order-1".equals(r.key())).map(ConsumerRecord::value))
        .containsExactly("created", "paid");
    for (ConsumerRecord<String, String> r : records) {
      String id = ids.get(List.of("created", "paid", "no key").indexOf(r.value()));
      assertThat(header(r, KafkaHeaderNames.FENCING)).isEqualTo("9;" + lock + ";g-9");
      assertThat(header(r, KafkaHeaderNames.LEGACY_TOKEN)).as("the older form is not written").isNull();
      assertThat(header(r, KafkaHeaderNames.EVENT_ID)).isEqualTo(id);
    }
    Receiver.await("rows delivered", WAIT, () -> rowsQuietly(table).stream()
        .allMatch(r -> r.state().equals(OutboxSchema.DELIVERED)));
    assertThat(relay.metrics().deliveries(OutboxSchema.CHANNEL_KAFKA, RelayMetrics.Outcome.DELIVERED)).isEqualTo(3);
  }

  @Test
  void withoutKafkaSettingsAKafkaEventFailsAndIsParkedNotDropped() throws Exception {
    String table = newTable();
    String[] id = new String[1];
    transaction(9, null, true, c -> id[0] = Outbox.kafka(c, table, "nowhere", "k", "v"));
    relay(table, b -> b.maxAttempts(2).backoff(Duration.ofMillis(100)));
    Receiver.await("parked", WAIT, () -> OutboxSchema.PARKED.equals(states(table).get(id[0])));
    assertThat(row(table, id[0]).lastError()).contains("no Kafka bootstrap servers").contains("--kafka-bootstrap");
  }

  private static String header(ConsumerRecord<String, String> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  private static List<ConsumerRecord<String, String>> consume(String topic, int count) {
    Properties p = new Properties();
    p.put("bootstrap.servers", kafka.bootstrapServers());
    p.put("group.id", "outbox-it-" + System.nanoTime());
    p.put("auto.offset.reset", "earliest");
    List<ConsumerRecord<String, String>> got = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
        new StringDeserializer())) {
      consumer.subscribe(List.of(topic));
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (got.size() < count && System.nanoTime() < end) {
        consumer.poll(Duration.ofMillis(200)).forEach(got::add);
      }
    }
    assertThat(got).as("records consumed from " + topic).hasSize(count);
    return got;
  }
}
