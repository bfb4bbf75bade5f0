package dev.fencing.outbox;

import dev.fencing.protocol.KafkaHeaderNames;
import dev.fencing.protocol.TokenGrammar;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Sends a Kafka event with an idempotent producer ({@code acks=all}) and waits for the acknowledgement: the row's key
 * and value (UTF-8), its headers, plus {@code fencing} (the row's {@code <token>;<lock>[;<grant>]}) and
 * {@code fencing-event-id}. kafka-clients (3.x or 4.x) is reached by reflection in the class loader given, so the
 * relay needs it only where Kafka events are relayed: the application's own, or the jars the command is given.
 */
final class KafkaDelivery implements AutoCloseable {
  private static final Set<String> OURS = Set.of(KafkaHeaderNames.FENCING, KafkaHeaderNames.SIGNATURE,
      KafkaHeaderNames.EVENT_ID, KafkaHeaderNames.LEGACY_TOKEN, KafkaHeaderNames.LEGACY_LOCK,
      KafkaHeaderNames.LEGACY_GRANT);
  private static final String SERIALIZER = "org.apache.kafka.common.serialization.ByteArraySerializer";

  private final Object producer;
  private final Method send;
  private final Method close;
  private final Constructor<?> record;
  private final Constructor<?> header;
  private final Duration timeout;

  /**
   * @param properties producer settings; the relay's own ({@code acks}, {@code enable.idempotence}, serializers,
   *     timeouts) override them
   */
  KafkaDelivery(ClassLoader loader, String bootstrapServers, Map<String, String> properties, Duration timeout) {
    this.timeout = timeout;
    Properties p = new Properties();
    p.putAll(properties);
    p.put("bootstrap.servers", bootstrapServers);
    p.put("acks", "all");
    p.put("enable.idempotence", "true");
    p.put("key.serializer", SERIALIZER);
    p.put("value.serializer", SERIALIZER);
    p.put("linger.ms", "0");
    long ms = Math.max(1000, timeout.toMillis());
    p.put("request.timeout.ms", Long.toString(ms));
    p.put("delivery.timeout.ms", Long.toString(ms));
    p.put("max.block.ms", Long.toString(ms));
    p.putIfAbsent("client.id", "fencing-outbox-relay");
    Thread thread = Thread.currentThread();
    ClassLoader previous = thread.getContextClassLoader();
    // kafka-clients loads the serializer and reporter classes it is configured with from the context loader.
    thread.setContextClassLoader(loader);
    try {
      Class<?> producerClass = Class.forName("org.apache.kafka.clients.producer.KafkaProducer", true, loader);
      Class<?> recordClass = Class.forName("org.apache.kafka.clients.producer.ProducerRecord", true, loader);
      Class<?> headerClass = Class.forName("org.apache.kafka.common.header.internals.RecordHeader", true, loader);
      producer = producerClass.getConstructor(Properties.class).newInstance(p);
      send = producerClass.getMethod("send", recordClass);
      close = producerClass.getMethod("close", Duration.class);
      record = recordClass.getConstructor(String.class, Integer.class, Object.class, Object.class, Iterable.class);
      header = headerClass.getConstructor(String.class, byte[].class);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("Kafka events need kafka-clients (3.x or 4.x) and its slf4j-api on the class "
          + "path (the command: --kafka-jar): " + e.getMessage(), e);
    } catch (InvocationTargetException e) {
      throw new IllegalStateException("cannot create the Kafka producer: " + HttpDelivery.describe(e.getCause()),
          e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("kafka-clients in an unknown shape: " + e, e);
    } finally {
      thread.setContextClassLoader(previous);
    }
  }

  DeliveryResult deliver(OutboxEvent e) throws InterruptedException {
    Object r;
    try {
      List<Object> headers = new ArrayList<>();
      for (String[] h : Headers.parse(e.headers())) {
        if (!OURS.contains(h[0].toLowerCase(Locale.ROOT))) {
          headers.add(header.newInstance(h[0], utf8(h[1])));
        }
      }
      if (e.token() != null && e.lock() != null) {
        String grant = e.grant() == null || e.grant().isEmpty() ? null : e.grant();
        headers.add(header.newInstance(KafkaHeaderNames.FENCING,
            TokenGrammar.kafkaValue(e.token(), e.lock(), grant).getBytes(StandardCharsets.US_ASCII)));
      }
      headers.add(header.newInstance(KafkaHeaderNames.EVENT_ID, utf8(e.eventId())));
      if (e.target() == null || e.target().isBlank()) {
        return DeliveryResult.invalid("no topic");
      }
      r = record.newInstance(e.target(), null, e.messageKey() == null ? null : utf8(e.messageKey()),
          e.payload() == null ? null : utf8(e.payload()), headers);
    } catch (IllegalArgumentException bad) {
      return DeliveryResult.invalid(bad.getMessage());
    } catch (ReflectiveOperationException bad) {
      return DeliveryResult.invalid("cannot build the record: " + HttpDelivery.describe(cause(bad)));
    }
    try {
      Future<?> ack = (Future<?>) send.invoke(producer, r);
      ack.get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
      return DeliveryResult.DELIVERED;
    } catch (ExecutionException | InvocationTargetException failed) {
      return DeliveryResult.failed(HttpDelivery.describe(failed.getCause()));
    } catch (TimeoutException late) {
      return DeliveryResult.failed("no acknowledgement within " + timeout.toMillis() + " ms");
    } catch (IllegalAccessException impossible) {
      throw new IllegalStateException(impossible);
    }
  }

  private static Throwable cause(ReflectiveOperationException e) {
    return e instanceof InvocationTargetException && e.getCause() != null ? e.getCause() : e;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    try {
      close.invoke(producer, timeout);
    } catch (ReflectiveOperationException e) {
      // closing: nothing left to do with it
    }
  }
}
