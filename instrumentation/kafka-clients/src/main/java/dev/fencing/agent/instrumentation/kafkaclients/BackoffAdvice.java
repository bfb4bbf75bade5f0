package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.KafkaHook;
import net.bytebuddy.asm.Advice;
import org.apache.kafka.clients.producer.internals.ProducerBatch;

/**
 * On the exit of {@code RecordAccumulator.shouldBackoff(leaderChanged, batch, waited)}, which ready() and drain() ask
 * under the partition's lock for its first batch: a batch that must not leave backs off, so drain() never takes it
 * for a produce request. It is then failed by {@link ReadyAdvice} (never sent) or by Kafka's delivery-timeout sweep
 * (a retry). One check per partition per turn, and only while {@link KafkaHook#bufferedMayBeHeld} says one may be
 * held.
 *
 * <p>Inlined into RecordAccumulator: bootstrap, JDK and kafka-clients classes only.
 */
public final class BackoffAdvice {
  private BackoffAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Argument(1) ProducerBatch batch,
      @Advice.Return(readOnly = false) boolean backoff) {
    if (!backoff && batch != null) {
      KafkaHook hook = Fencing.kafka();
      if (hook.bufferedMayBeHeld() && hook.buffered(batch, false) != null) {
        backoff = true;
      }
    }
  }
}
