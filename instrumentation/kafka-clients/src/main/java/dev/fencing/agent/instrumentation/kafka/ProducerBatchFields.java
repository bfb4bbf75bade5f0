package dev.fencing.agent.instrumentation.kafka;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Reads a ProducerBatch's topic and record count. They are package-private fields of kafka-clients
 * (the same in every version the hook supports) and the agent's loader cannot see Kafka's classes: method handles
 * looked up once per batch class, with private access (the application's class path is an unnamed module, open to
 * all).
 */
final class ProducerBatchFields {
  static final class Accessors {
    final MethodHandle topicPartition;
    final MethodHandle topic;
    final MethodHandle recordCount;

    Accessors(Class<?> batchClass) throws ReflectiveOperationException {
      ClassLoader loader = batchClass.getClassLoader();
      Class<?> tp = Class.forName("org.apache.kafka.common.TopicPartition", false, loader);
      MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(batchClass, MethodHandles.lookup());
      topicPartition = lookup.findGetter(batchClass, "topicPartition", tp)
          .asType(MethodType.methodType(Object.class, Object.class));
      recordCount = lookup.findGetter(batchClass, "recordCount", int.class)
          .asType(MethodType.methodType(int.class, Object.class));
      topic = MethodHandles.publicLookup().findVirtual(tp, "topic", MethodType.methodType(String.class))
          .asType(MethodType.methodType(String.class, Object.class));
    }

    String topic(Object batch) throws Throwable {
      return (String) topic.invokeExact(topicPartition.invokeExact(batch));
    }

    int recordCount(Object batch) throws Throwable {
      return (int) recordCount.invokeExact(batch);
    }
  }

  /** Why accessors could not be built for a class (null when they could). */
  static final class Lookup {
    final Accessors accessors;
    final Throwable failure;

    Lookup(Accessors accessors, Throwable failure) {
      this.accessors = accessors;
      this.failure = failure;
    }
  }

  private static final ClassValue<Lookup> LOOKUPS = new ClassValue<>() {
    @Override
    protected Lookup computeValue(Class<?> type) {
      try {
        return new Lookup(new Accessors(type), null);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        return new Lookup(null, e);
      }
    }
  };

  private ProducerBatchFields() {}

  static Lookup of(Class<?> batchClass) {
    return LOOKUPS.get(batchClass);
  }
}
