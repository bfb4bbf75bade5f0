package dev.fencing.bench;

import dev.fencing.protocol.KafkaHeaderNames;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * A producer interceptor that gives every record the header the agent adds, {@code fencing}, with a value of the
 * agent's form and length ({@code <token>;<lock>;<grant>}), through the same {@code Headers.add(String, byte[])} call,
 * without the agent: the kafka-perf part's {@code header} variant, so that what kafka-clients and the broker do with a
 * record carrying the header is measured apart from the agent's own per-record work. Passed to Kafka's
 * ProducerPerformance as {@code interceptor.classes}.
 */
public final class FencingHeaderInterceptor implements ProducerInterceptor<Object, Object> {
  /**
   * The agent's value for lock {@code bench-kafka} with a 16-digit etcd lease as its grant; a compile-time constant
   * header name, so the producer's class path needs no fencing classes.
   */
  private static final byte[] VALUE = "1234;bench-kafka;694d8f0a1b2c3d4e".getBytes(StandardCharsets.US_ASCII);
  /**
   * {@code -Dbench.perf.header-form}: {@code min} (the {@code header-min} variant), the smallest header instead, a
   * one-letter name and a one-digit value, so that what any header costs is told apart from what this header's size
   * costs; {@code name-min} and {@code value-min} shorten only the name or only the value, to tell which of the two
   * the size costs; {@code nogrant} sends the form without a grant, {@code <token>;<lock>}.
   */
  private static final String FORM = System.getProperty("bench.perf.header-form", "");
  private static final String NAME = FORM.equals("min") || FORM.equals("name-min") ? "f" : KafkaHeaderNames.FENCING;
  private static final byte[] HEADER_VALUE = FORM.equals("min") || FORM.equals("value-min") ? new byte[] {'1'}
      : FORM.equals("nogrant") ? "1234;bench-kafka".getBytes(StandardCharsets.US_ASCII) : VALUE;

  @Override
  public ProducerRecord<Object, Object> onSend(ProducerRecord<Object, Object> record) {
    record.headers().add(NAME, HEADER_VALUE);
    return record;
  }

  @Override
  public void onAcknowledgement(RecordMetadata metadata, Exception exception) {}

  @Override
  public void close() {}

  @Override
  public void configure(Map<String, ?> configs) {}
}
