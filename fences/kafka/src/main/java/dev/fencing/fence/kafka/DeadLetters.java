package dev.fencing.fence.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends quarantined records to the dead-letter topic with a producer of its own, built from the consumer's bootstrap
 * servers and security settings. Key and value are serialized again with the counterparts of the consumer's
 * deserializers (the interceptor only sees deserialized records); the original headers are kept and the reason is
 * added ({@link #REJECTED} and the others below).
 *
 * <p>A poll waits for the dead-letter topic's acknowledgements at most {@code fencing.fence.dead-letter.timeout.ms}
 * (which is also the producer's {@code max.block.ms}), so that in the normal case a refused record is in the
 * dead-letter topic before the consumer can commit past it. Nothing here throws into the consumer: a failed or
 * unacknowledged send is logged and counted ({@code fencing_fence_dead_letters_total{outcome="failed"}}).
 */
final class DeadLetters implements AutoCloseable {

  /** Why: {@code stale-token}, {@code missing-token}, {@code malformed-token}, {@code unknown-lock}, {@code store-unavailable}. */
  public static final String REJECTED = "fencing-rejected";
  /** A sentence saying what was wrong (UTF-8). */
  public static final String DETAIL = "fencing-rejected-detail";
  /** For a stale token: the fence token that beat it (decimal). */
  public static final String CURRENT_TOKEN = "fencing-current-token";
  public static final String SOURCE_TOPIC = "fencing-source-topic";
  public static final String SOURCE_PARTITION = "fencing-source-partition";
  public static final String SOURCE_OFFSET = "fencing-source-offset";

  private static final Logger LOG = LoggerFactory.getLogger(DeadLetters.class);
  private static final String SERIALIZATION = "org.apache.kafka.common.serialization.";

  private final String topic;
  private final Producer<byte[], byte[]> producer;
  private final Serializer<Object> keySerializer;
  private final Serializer<Object> valueSerializer;
  private final long timeoutNanos;
  private final KafkaFenceMetrics metrics;

  private DeadLetters(String topic, Producer<byte[], byte[]> producer, Serializer<Object> keySerializer,
      Serializer<Object> valueSerializer, long timeoutMillis, KafkaFenceMetrics metrics) {
    this.topic = topic;
    this.producer = producer;
    this.keySerializer = keySerializer;
    this.valueSerializer = valueSerializer;
    this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    this.metrics = metrics;
  }

  /** The dead-letter sender for a consumer's configuration, or null when no dead-letter topic is set. */
  static DeadLetters create(KafkaFenceSettings settings, Map<String, ?> consumer, KafkaFenceMetrics metrics) {
    if (settings.deadLetterTopic() == null) {
      return null;
    }
    Serializer<Object> key = serializer(settings.keySerializer(), KafkaFenceSettings.DLQ_KEY_SERIALIZER,
        consumer.get(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG), ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
    Serializer<Object> value = serializer(settings.valueSerializer(), KafkaFenceSettings.DLQ_VALUE_SERIALIZER,
        consumer.get(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG), ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
    key.configure(consumer, true);
    value.configure(consumer, false);
    Map<String, Object> config = producerConfig(settings, consumer);
    Producer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
        new ByteArraySerializer());
    return new DeadLetters(settings.deadLetterTopic(), producer, key, value, settings.deadLetterTimeoutMillis(),
        metrics);
  }

  /** The consumer's connection and security settings, then the {@code fencing.fence.dead-letter.producer.*} ones. */
  static Map<String, Object> producerConfig(KafkaFenceSettings settings, Map<String, ?> consumer) {
    Map<String, Object> config = new HashMap<>();
    consumer.forEach((k, v) -> {
      if (v != null && (k.equals(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG)
          || k.equals(CommonClientConfigs.CLIENT_DNS_LOOKUP_CONFIG)
          || k.equals(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG)
          || k.startsWith("ssl.") || k.startsWith("sasl."))) {
        config.put(k, v);
      }
    });
    Object clientId = consumer.get(CommonClientConfigs.CLIENT_ID_CONFIG);
    if (clientId != null && !clientId.toString().isEmpty()) {
      config.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId + "-fencing-dead-letter");
    }
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, settings.deadLetterTimeoutMillis());
    config.putAll(settings.deadLetterProducer());
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    return config;
  }

  /**
   * The serializer named by {@code explicit}, else the counterpart of a Kafka deserializer ({@code
   * org.apache.kafka.common.serialization.XDeserializer} becomes {@code XSerializer}).
   */
  @SuppressWarnings("unchecked")
  static Serializer<Object> serializer(String explicit, String key, Object deserializer, String deserializerKey) {
    String name = explicit;
    if (name == null) {
      String d = deserializer instanceof Class<?> c ? c.getName() : deserializer == null ? null : deserializer.toString();
      if (d == null || !d.startsWith(SERIALIZATION) || !d.endsWith("Deserializer")) {
        throw new ConfigException(key, null, "cannot derive a serializer for the dead-letter topic from "
            + deserializerKey + "=" + d + ": name one (a class implementing org.apache.kafka.common.serialization."
            + "Serializer)");
      }
      name = d.substring(0, d.length() - "Deserializer".length()) + "Serializer";
    }
    try {
      ClassLoader loader = Thread.currentThread().getContextClassLoader();
      Class<?> type = Class.forName(name, true, loader != null ? loader : DeadLetters.class.getClassLoader());
      if (!Serializer.class.isAssignableFrom(type)) {
        throw new ConfigException(key, name, "not a org.apache.kafka.common.serialization.Serializer");
      }
      return (Serializer<Object>) type.getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new ConfigException(key, name, "cannot load or create it: " + e);
    }
  }

  /** Sends {@code quarantined} and waits for the acknowledgements, within the timeout. Never throws. */
  void send(List<Quarantine> quarantined) {
    long deadline = System.nanoTime() + timeoutNanos;
    List<Future<RecordMetadata>> pending = new ArrayList<>(quarantined.size());
    for (Quarantine q : quarantined) {
      try {
        ConsumerRecord<?, ?> r = q.record();
        Headers headers = new RecordHeaders(r.headers().toArray());
        headers.add(REJECTED, ascii(q.reason().label().replace('_', '-')));
        headers.add(DETAIL, q.detail() == null ? new byte[0] : q.detail().getBytes(StandardCharsets.UTF_8));
        if (q.current() > 0) {
          headers.add(CURRENT_TOKEN, ascii(Long.toString(q.current())));
        }
        headers.add(SOURCE_TOPIC, r.topic().getBytes(StandardCharsets.UTF_8));
        headers.add(SOURCE_PARTITION, ascii(Integer.toString(r.partition())));
        headers.add(SOURCE_OFFSET, ascii(Long.toString(r.offset())));
        byte[] key = keySerializer.serialize(topic, headers, r.key());
        byte[] value = valueSerializer.serialize(topic, headers, r.value());
        String label = q.lockLabel();
        pending.add(producer.send(new ProducerRecord<>(topic, null, key, value, headers), (md, e) -> {
          metrics.deadLetter(label, e == null);
          if (e != null) {
            LOG.warn("fencing: a quarantined record of {}-{}@{} could not be dead-lettered to {}: it is dropped",
                r.topic(), r.partition(), r.offset(), topic, e);
          }
        }));
      } catch (RuntimeException e) {
        // Thrown by the serializers or before the producer takes the record (no callback then).
        metrics.deadLetter(q.lockLabel(), false);
        LOG.warn("fencing: a quarantined record of {}-{}@{} could not be dead-lettered to {}: it is dropped",
            q.record().topic(), q.record().partition(), q.record().offset(), topic, e);
      }
    }
    for (Future<RecordMetadata> f : pending) {
      long left = deadline - System.nanoTime();
      try {
        f.get(Math.max(left, 0), TimeUnit.NANOSECONDS);
      } catch (ExecutionException e) {
        // counted and logged by the callback
      } catch (TimeoutException e) {
        LOG.warn("fencing: the dead-letter topic {} did not acknowledge within {} ms; the consumer goes on (the "
            + "records may still arrive, fencing_fence_dead_letters_total counts the outcome)", topic,
            TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
        return;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  @Override
  public void close() {
    try {
      producer.close(Duration.ofNanos(timeoutNanos));
    } catch (RuntimeException e) {
      LOG.warn("fencing: closing the dead-letter producer failed", e);
    }
    keySerializer.close();
    valueSerializer.close();
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
