package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Fencing;
import java.util.Deque;
import net.bytebuddy.asm.Advice;

/**
 * On the exit of {@code ProducerBatch.split}: the parts a batch too large for the broker was split into hold its
 * records, and the records of the grants it held ({@link dev.fencing.agent.bootstrap.KafkaHook#batchSplit}).
 *
 * <p>Inlined into ProducerBatch: bootstrap and JDK classes only.
 */
public final class BatchSplitAdvice {
  private BatchSplitAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.This Object batch, @Advice.Return Deque<?> parts) {
    Fencing.kafka().batchSplit(batch, parts);
  }
}
