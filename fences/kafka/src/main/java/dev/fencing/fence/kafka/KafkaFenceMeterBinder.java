package dev.fencing.fence.kafka;

import dev.fencing.protocol.Rejection;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The Kafka fence's counters ({@link KafkaFenceMetrics}) as Micrometer meters with Micrometer's dotted names, so that
 * each registry renders its own style (Prometheus: {@code fencing_fence_rejections_total{fence="kafka",lock,reason}},
 * OTLP: {@code fencing.fence.rejections}):
 * <ul>
 *   <li>{@value #REJECTIONS} {fence, lock, reason}: records the fence quarantined;</li>
 *   <li>{@value #DEAD_LETTERS} {fence, lock, outcome}: quarantined records the dead-letter topic acknowledged
 *       ({@code sent}) or that could not be sent ({@code failed});</li>
 *   <li>{@value #STORE_FAILURES} {fence}: fence store calls that failed (the poll waited and retried);</li>
 *   <li>{@value #DUPLICATES} {fence, lock}: later copies of an outbox event the outbox rule skipped.</li>
 * </ul>
 * Tags are bounded: {@code fence="kafka"}, configured lock names (or {@code (unknown)}), fixed enums. The meters read
 * the fence's own adders (FunctionCounters), so binding costs nothing on the poll path. Locks of consumers configured
 * after {@link #bindTo} get their meters when they are configured.
 *
 * <p>Bind it to the application's registry: in Spring Boot declare it as a bean (the starter
 * {@code fencing-fence-spring-boot-starter} does), elsewhere call {@code new KafkaFenceMeterBinder().bindTo(registry)}.
 * Micrometer is an optional dependency of the fence: this class is the only one that needs it.
 */
public final class KafkaFenceMeterBinder implements MeterBinder {

  public static final String REJECTIONS = "fencing.fence.rejections";
  public static final String DEAD_LETTERS = "fencing.fence.dead.letters";
  public static final String STORE_FAILURES = "fencing.fence.store.failures";
  public static final String DUPLICATES = "fencing.fence.duplicates.skipped";

  private final KafkaFenceMetrics metrics;

  /** The counters of every fencing consumer in this JVM ({@link KafkaFenceMetrics#global()}). */
  public KafkaFenceMeterBinder() {
    this(KafkaFenceMetrics.global());
  }

  public KafkaFenceMeterBinder(KafkaFenceMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    FunctionCounter.builder(STORE_FAILURES, metrics, KafkaFenceMetrics::storeFailures)
        .description("Kafka fence store calls that failed; the poll waited and retried.")
        .tags("fence", KafkaFenceMetrics.FENCE)
        .register(registry);
    metrics.onLock(lock -> {
      if (registry.isClosed()) {
        return false;
      }
      bindLock(registry, lock);
      return true;
    });
  }

  private void bindLock(MeterRegistry registry, String lock) {
    for (Rejection r : KafkaFenceMetrics.REASONS) {
      FunctionCounter.builder(REJECTIONS, metrics, m -> m.rejections(lock, r))
          .description("Requests, writes or records refused by a fence, by reason.")
          .tags("fence", KafkaFenceMetrics.FENCE, "lock", lock, "reason", r.label())
          .register(registry);
    }
    for (String outcome : KafkaFenceMetrics.OUTCOMES) {
      boolean sent = outcome.equals("sent");
      FunctionCounter.builder(DEAD_LETTERS, metrics, m -> m.deadLetters(lock, sent))
          .description("Records quarantined by the Kafka fence, by dead-letter outcome.")
          .tags("fence", KafkaFenceMetrics.FENCE, "lock", lock, "outcome", outcome)
          .register(registry);
    }
    FunctionCounter.builder(DUPLICATES, metrics, m -> m.duplicatesSkipped(lock))
        .description("Later copies of an outbox event the Kafka fence skipped.")
        .tags("fence", KafkaFenceMetrics.FENCE, "lock", lock)
        .register(registry);
  }
}
