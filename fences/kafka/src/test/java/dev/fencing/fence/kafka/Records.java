package dev.fencing.fence.kafka;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;

/** Real ConsumerRecords built by hand, as a poll would return them, for the fence logic tests. */
final class Records {

  private final Map<TopicPartition, List<ConsumerRecord<String, String>>> byPartition = new LinkedHashMap<>();
  /**
   * The next offset per partition, shared by all batches of the JVM: consecutive batches are consecutive parts of one
   * log, as a consumer's polls are ({@link #at} rewinds, for redeliveries).
   */
  private static final Map<TopicPartition, Long> NEXT = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<TopicPartition, Long> next = new LinkedHashMap<>();

  /** A record on {@code topic}-{@code partition} with the given header name/value pairs (null value allowed). */
  Records add(String topic, int partition, String value, String... headers) {
    RecordHeaders h = new RecordHeaders();
    for (int i = 0; i < headers.length; i += 2) {
      h.add(headers[i], headers[i + 1] == null ? null : headers[i + 1].getBytes(StandardCharsets.UTF_8));
    }
    return add(topic, partition, value, h);
  }

  Records add(String topic, int partition, String value, RecordHeaders headers) {
    TopicPartition tp = new TopicPartition(topic, partition);
    List<ConsumerRecord<String, String>> list = byPartition.computeIfAbsent(tp, k -> new ArrayList<>());
    long offset = next.containsKey(tp) ? next.get(tp) : NEXT.getOrDefault(tp, 0L);
    list.add(new ConsumerRecord<>(topic, partition, offset, 0L, TimestampType.CREATE_TIME, -1, -1, null, value,
        headers, Optional.empty()));
    next.put(tp, offset + 1);
    NEXT.merge(tp, offset + 1, Math::max);
    return this;
  }

  /** The next record of {@code topic}-{@code partition} in this batch gets {@code offset} (a redelivery). */
  Records at(String topic, int partition, long offset) {
    next.put(new TopicPartition(topic, partition), offset);
    return this;
  }

  /** The offset the next record of {@code topic}-{@code partition} would get. */
  long nextOffset(String topic, int partition) {
    TopicPartition tp = new TopicPartition(topic, partition);
    return next.containsKey(tp) ? next.get(tp) : NEXT.getOrDefault(tp, 0L);
  }

  /** A record of {@code lock} with {@code token} on t-0, as the agent writes it (one {@code fencing} header). */
  Records fenced(String lock, String token, String value) {
    return add("t", 0, value, "fencing", token + ";" + lock);
  }

  ConsumerRecords<String, String> build() {
    Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
    next.forEach((tp, o) -> offsets.put(tp, new OffsetAndMetadata(o)));
    return new ConsumerRecords<>(byPartition, offsets);
  }

  static List<String> values(ConsumerRecords<String, String> records) {
    List<String> out = new ArrayList<>();
    records.forEach(r -> out.add(r.value()));
    return out;
  }
}
