package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** The broker starts, takes a topic, a record with a header and a committed transaction, and is gone after close. */
class KafkaBrokerTest {
  /** The storage tool takes an id that starts with '-' for an option: one broker start in 64 failed that way. */
  @Test
  void aClusterIdNeverStartsWithADash() {
    for (int i = 0; i < 5_000; i++) {
      String id = KafkaBroker.newClusterId();
      assertThat(id).hasSize(22).doesNotStartWith("-");
    }
  }

  @Test
  void producesAndConsumesThroughARealBrokerAndStopsOnClose() throws Exception {
    long start = System.nanoTime();
    KafkaBroker broker = KafkaBroker.start();
    long startMs = (System.nanoTime() - start) / 1_000_000;
    try (broker) {
      assertThat(broker.isAlive()).isTrue();
      broker.createTopic("t", 2);
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
          broker.bootstrapServers(), "transactional.id", "tx-1"), new StringSerializer(), new StringSerializer())) {
        producer.initTransactions();
        producer.beginTransaction();
        ProducerRecord<String, String> r = new ProducerRecord<>("t", "k", "v");
        r.headers().add("h", "x".getBytes(StandardCharsets.UTF_8));
        producer.send(r);
        producer.commitTransaction();
      }
      try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of("bootstrap.servers",
          broker.bootstrapServers(), "group.id", "g", "auto.offset.reset", "earliest",
          "isolation.level", "read_committed"), new StringDeserializer(), new StringDeserializer())) {
        consumer.subscribe(List.of("t"));
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (got.isEmpty() && System.nanoTime() < end) {
          consumer.poll(Duration.ofMillis(200)).forEach(got::add);
        }
        assertThat(got).hasSize(1);
        assertThat(got.get(0).value()).isEqualTo("v");
        assertThat(new String(got.get(0).headers().lastHeader("h").value(), StandardCharsets.UTF_8)).isEqualTo("x");
      }
    }
    assertThat(broker.isAlive()).isFalse();
    assertThat(broker.logFile()).doesNotExist();
    System.out.println("Kafka broker ready after " + startMs + " ms");
  }
}
