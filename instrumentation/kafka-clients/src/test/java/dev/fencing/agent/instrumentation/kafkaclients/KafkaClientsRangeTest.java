package dev.fencing.agent.instrumentation.kafkaclients;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The producer and consumer hooks against the real kafka-clients jars at both ends of the tested range (3.9.1, the
 * one the module compiles against, and the latest 4.x): every hooked class is selected, the methods advised in each
 * are the ones the hooks need, and the advice weaves. A release that renames or reshapes one fails here.
 */
class KafkaClientsRangeTest {
  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void everyHookFindsItsMethodsAndItsAdviceWeaves(String end) throws Exception {
    List<Path> jars = LibraryCheck.versionJars("kafka-clients", end);
    Map<String, Integer> advised = LibraryCheck.advised(new KafkaClientsInstrumentationModule(), jars);
    // KafkaProducer: send, beginTransaction and commitTransaction (a commit is judged by its records' grants).
    // poll(long) and poll(Duration) in 3.x; 4.0 removed poll(long). RecordAccumulator: ready, shouldBackoff and
    // the delivery-timeout sweep; ProducerBatch: its delivery-timeout check, its failure path, the append that notes
    // the grant of each record, its end and its split.
    assertThat(advised).isEqualTo(Map.of(
        "org.apache.kafka.clients.producer.KafkaProducer", 3,
        "org.apache.kafka.clients.consumer.KafkaConsumer", end.equals("oldest") ? 2 : 1,
        "org.apache.kafka.clients.consumer.ConsumerRecords", 1,
        "org.apache.kafka.clients.producer.internals.RecordAccumulator", 3,
        "org.apache.kafka.clients.producer.internals.ProducerBatch", 5));
  }
}
