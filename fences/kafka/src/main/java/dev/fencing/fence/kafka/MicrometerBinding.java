package dev.fencing.fence.kafka;

import dev.fencing.protocol.Rejection;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Publishes {@link KafkaFenceMetrics} as Micrometer FunctionCounters reading the same adders. Loaded only when
 * Micrometer is on the consumer's class path (the interceptor checks first, outside this class: verifying this class
 * loads Micrometer's types), so the fence never needs it. Names
 * without {@code _total}: registries for Prometheus add it to counters.
 */
final class MicrometerBinding {

  private MicrometerBinding() {
  }

  /** Locks already in the global registry: a second consumer of a lock shares its series. */
  private static final Set<String> BOUND = ConcurrentHashMap.newKeySet();

  /** Registers every series of {@code lock} in Micrometer's global registry, once per JVM. */
  static void bind(KafkaFenceMetrics metrics, String lock) {
    if (BOUND.add(lock)) {
      bind(Metrics.globalRegistry, metrics, lock);
    }
  }

  private static volatile boolean storeBound;

  /** Registers the store failure counter in Micrometer's global registry, once per JVM. */
  static synchronized void bindStore(KafkaFenceMetrics metrics) {
    if (!storeBound) {
      storeBound = true;
      bindStore(Metrics.globalRegistry, metrics);
    }
  }

  static void bindStore(MeterRegistry registry, KafkaFenceMetrics metrics) {
    FunctionCounter.builder(strip(KafkaFenceMetrics.STORE_FAILURES), metrics, KafkaFenceMetrics::storeFailures)
        .description("Kafka fence store calls that failed; the poll waited and retried.")
        .tags("fence", KafkaFenceMetrics.FENCE)
        .register(registry);
  }

  static void bind(MeterRegistry registry, KafkaFenceMetrics metrics, String lock) {
    for (Rejection r : KafkaFenceMetrics.REASONS) {
      FunctionCounter.builder(strip(KafkaFenceMetrics.REJECTIONS), metrics, m -> m.rejections(lock, r))
          .description("Requests, writes or records refused by a fence, by reason.")
          .tags("fence", KafkaFenceMetrics.FENCE, "lock", lock, "reason", r.label())
          .register(registry);
    }
    for (String outcome : KafkaFenceMetrics.OUTCOMES) {
      boolean sent = outcome.equals("sent");
      FunctionCounter.builder(strip(KafkaFenceMetrics.DEAD_LETTERS), metrics, m -> m.deadLetters(lock, sent))
          .description("Records quarantined by the Kafka fence, by dead-letter outcome.")
          .tags("fence", KafkaFenceMetrics.FENCE, "lock", lock, "outcome", outcome)
          .register(registry);
    }
  }

  private static String strip(String name) {
    return name.substring(0, name.length() - "_total".length());
  }
}
