package dev.fencing.fence.kafka;

import io.micrometer.core.instrument.Metrics;

/**
 * {@code fencing.fence.metrics.micrometer=true}: binds {@link KafkaFenceMeterBinder} to Micrometer's
 * {@code Metrics.globalRegistry} once per JVM, for applications that add their registries there and have no other
 * way to bind the fence (Kafka creates the interceptor). Loaded only when Micrometer is on the consumer's class path
 * (the interceptor checks first, outside this class: verifying this class loads Micrometer's types).
 */
final class MicrometerBinding {

  private static boolean bound;

  private MicrometerBinding() {
  }

  static synchronized void bindGlobal(KafkaFenceMetrics metrics) {
    if (!bound) {
      bound = true;
      new KafkaFenceMeterBinder(metrics).bindTo(Metrics.globalRegistry);
    }
  }
}
