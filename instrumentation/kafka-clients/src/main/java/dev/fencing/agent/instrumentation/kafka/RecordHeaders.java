package dev.fencing.agent.instrumentation.kafka;

import dev.fencing.agent.bootstrap.KafkaHook;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.charset.StandardCharsets;

/**
 * Reads (fencing-lock, fencing-token), and fencing-signature and fencing-grant when present, from a ConsumerRecord. The agent's loader cannot see kafka-clients, so the
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
   * not visible ASCII is dropped by {@code TokenContext}), or null when the lock or token
   * header is missing or unreadable.
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
      byte[] token = value(a, headers, KafkaHook.TOKEN_HEADER);
      byte[] lock = value(a, headers, KafkaHook.LOCK_HEADER);
      if (token == null || lock == null) {
        return null;
      }
      byte[] signature = value(a, headers, KafkaHook.SIGNATURE_HEADER);
      byte[] grant = value(a, headers, KafkaHook.GRANT_HEADER);
      return new String[] {new String(lock, StandardCharsets.UTF_8), new String(token, StandardCharsets.US_ASCII),
          signature == null || signature.length > 64 ? null : new String(signature, StandardCharsets.US_ASCII),
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
