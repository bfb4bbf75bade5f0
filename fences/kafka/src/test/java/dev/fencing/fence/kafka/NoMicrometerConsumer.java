package dev.fencing.fence.kafka;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;

/**
 * Run by {@link WithoutMicrometerTest} in a class loader without Micrometer: only the JDK, kafka-clients and the fence.
 * Configures the interceptor with its defaults ({@code fencing.fence.metrics.micrometer=true} included) and fences a
 * stale record; returns the values that reach the application, then the Prometheus text line of the stale count.
 */
public final class NoMicrometerConsumer {

  private NoMicrometerConsumer() {
  }

  public static List<String> run() {
    FencingConsumerInterceptor<String, String> fence = new FencingConsumerInterceptor<>();
    fence.configure(Map.of(KafkaFenceSettings.LOCKS, "nomicrometer", KafkaFenceSettings.STORE, "memory"));
    List<String> out = new ArrayList<>();
    try {
      TopicPartition tp = new TopicPartition("no-micrometer", 0);
      List<ConsumerRecord<String, String>> batch = List.of(record(tp, 0, "7", "a"), record(tp, 1, "5", "stale"));
      fence.onConsume(new ConsumerRecords<>(Map.of(tp, batch), Map.of())).forEach(r -> out.add(r.value()));
    } finally {
      fence.close();
    }
    KafkaFenceMetrics.global().prometheusText().lines()
        .filter(l -> l.contains("lock=\"nomicrometer\",reason=\"stale_token\"")).forEach(out::add);
    return out;
  }

  private static ConsumerRecord<String, String> record(TopicPartition tp, long offset, String token, String value) {
    RecordHeaders h = new RecordHeaders();
    h.add("fencing", (token + ";nomicrometer").getBytes(StandardCharsets.UTF_8));
    return new ConsumerRecord<>(tp.topic(), tp.partition(), offset, 0L, TimestampType.CREATE_TIME, -1, -1, null,
        value, h, Optional.empty());
  }
}
