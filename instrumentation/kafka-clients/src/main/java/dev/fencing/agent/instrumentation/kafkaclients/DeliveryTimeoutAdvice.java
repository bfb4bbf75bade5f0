package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Fencing;
import net.bytebuddy.asm.Advice;

/**
 * On the exit of {@code ProducerBatch.hasReachedDeliveryTimeout}: during Kafka's sweep of the buffer, a batch that
 * must not leave (held back by {@link BackoffAdvice}) counts as expired, so Kafka fails it now through its own path,
 * which keeps sequence numbers and transactions straight for a batch that was sent before (a retry).
 *
 * <p>Inlined into ProducerBatch: bootstrap and JDK classes only.
 */
public final class DeliveryTimeoutAdvice {
  private DeliveryTimeoutAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.This Object batch, @Advice.Return(readOnly = false) boolean reached) {
    if (!reached && Fencing.kafka().expireHeld(batch) != null) {
      reached = true;
    }
  }
}
