package dev.fencing.agent.instrumentation.kafka;

import dev.fencing.agent.bootstrap.KafkaHook;
import dev.fencing.protocol.TokenGrammar;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.charset.StandardCharsets;

/**
 * Reads a ConsumerRecord's lock, token and grant ({@code fencing}, or the older form's {@code fencing-lock},
 * {@code fencing-token}, {@code fencing-grant}) and its {@code fencing-signature}. The agent's loader cannot see
 * kafka-clients, so the
 * accessors ({@code record.headers().lastHeader(key).value()}) are method handles looked up once per record class,
 * on the application's own Kafka classes: public API of every kafka-clients version since 0.11.
 */
final class RecordHeaders {
  private static final class Accessors {
    final MethodHandle headers;
    final MethodHandle lastHeader;
    final MethodHandle value;

    Accessors(Class<?> recordClass) throws ReflectiveOperationException {
      ClassLoader loader = recordClass.getClassLoader();
      Class<?> headersType = Class.forName("org.apache.kafka.common.header.Headers", false, loader);
      Class<?> headerType = Class.forName("org.apache.kafka.common.header.Header", false, loader);
      MethodHandles.Lookup lookup = MethodHandles.publicLookup();
      headers = lookup.findVirtual(recordClass, "headers", MethodType.methodType(headersType))
          .asType(MethodType.methodType(Object.class, Object.class));
      lastHeader = lookup.findVirtual(headersType, "lastHeader", MethodType.methodType(headerType, String.class))
          .asType(MethodType.methodType(Object.class, Object.class, String.class));
      value = lookup.findVirtual(headerType, "value", MethodType.methodType(byte[].class))
          .asType(MethodType.methodType(byte[].class, Object.class));
    }
  }

  /** Null for a class that is not a Kafka record (or an unknown kafka-clients): nothing is propagated. */
  private static final ClassValue<Accessors> ACCESSORS = new ClassValue<>() {
    @Override
    protected Accessors computeValue(Class<?> type) {
      try {
        return new Accessors(type);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        return null;
      }
    }
  };

  private RecordHeaders() {}

  /**
   * {lock, token, signature, grant} as carried by the record (signature and grant null when absent; a grant that is
   * not visible ASCII is dropped by {@code TokenContext}), from its {@code fencing} header or, for a record of an older
   * writer, the {@code fencing-token} and {@code fencing-lock} headers; null when neither form is there, the record
   * carries both (malformed, as the Kafka fence rules), or the headers are unreadable.
   */
  static String[] pair(Object record) {
    if (record == null) {
      return null;
    }
    Accessors a = ACCESSORS.get(record.getClass());
    if (a == null) {
      return null;
    }
    try {
      Object headers = a.headers.invokeExact(record);
      byte[] fencing = value(a, headers, KafkaHook.HEADER);
      byte[] token = value(a, headers, KafkaHook.LEGACY_TOKEN_HEADER);
      byte[] lock = value(a, headers, KafkaHook.LEGACY_LOCK_HEADER);
      byte[] grant = value(a, headers, KafkaHook.LEGACY_GRANT_HEADER);
      byte[] signature = value(a, headers, KafkaHook.SIGNATURE_HEADER);
      String s = signature == null || signature.length > 64 ? null : new String(signature, StandardCharsets.US_ASCII);
      if (fencing != null) {
        if (token != null || lock != null || grant != null || fencing.length > TokenGrammar.MAX_KAFKA_VALUE_LENGTH) {
          return null;
        }
        String[] fields = TokenGrammar.kafkaFields(new String(fencing, StandardCharsets.US_ASCII));
        return fields[1] == null ? null : new String[] {fields[1], fields[0], s, fields[2]};
      }
      if (token == null || lock == null) {
        return null;
      }
      return new String[] {new String(lock, StandardCharsets.UTF_8), new String(token, StandardCharsets.US_ASCII), s,
          grant == null || grant.length > 64 ? null : new String(grant, StandardCharsets.US_ASCII)};
    } catch (Throwable t) {
      return null; // the application's record, never the agent's reason to fail its processing
    }
  }

  private static byte[] value(Accessors a, Object headers, String key) throws Throwable {
    if (headers == null) {
      return null;
    }
    Object header = a.lastHeader.invokeExact(headers, key);
    return header == null ? null : (byte[]) a.value.invokeExact(header);
  }
}
