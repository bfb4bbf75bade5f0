package dev.fencing.fence.kafka;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;

/**
 * Builds the filtered batch on every supported kafka-clients line. 4.x's batches carry {@code nextOffsets()} (the
 * positions after the poll, which the application may commit) and must keep them; 3.x has neither that method nor the
 * constructor taking it. The 4.x calls live in {@link V4}, which the JVM links only when it is used, so on 3.x they
 * are never resolved (no NoSuchMethodError).
 */
final class Batches {

  /** Whether the application's kafka-clients has {@code ConsumerRecords.nextOffsets()} (4.0 and later). */
  static final boolean NEXT_OFFSETS = hasNextOffsets();

  private Batches() {
  }

  static <K, V> ConsumerRecords<K, V> of(Map<TopicPartition, List<ConsumerRecord<K, V>>> kept,
      ConsumerRecords<K, V> original) {
    return NEXT_OFFSETS ? V4.of(kept, original) : V3.of(kept);
  }

  private static boolean hasNextOffsets() {
    try {
      ConsumerRecords.class.getMethod("nextOffsets");
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  private static final class V4 {
    static <K, V> ConsumerRecords<K, V> of(Map<TopicPartition, List<ConsumerRecord<K, V>>> kept,
        ConsumerRecords<K, V> original) {
      return new ConsumerRecords<>(kept, original.nextOffsets());
    }
  }

  private static final class V3 {
    @SuppressWarnings("deprecation") // 3.x's only constructor; 4.x deprecates it for the one above
    static <K, V> ConsumerRecords<K, V> of(Map<TopicPartition, List<ConsumerRecord<K, V>>> kept) {
      return new ConsumerRecords<>(kept);
    }
  }
}
