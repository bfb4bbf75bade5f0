package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Fencing;
import net.bytebuddy.asm.Advice;

/**
 * On {@code ProducerBatch.completeFutureAndFireCallbacks}, where every end of a batch meets (sent, failed, aborted):
 * its records are no longer buffered ({@link dev.fencing.agent.bootstrap.KafkaHook#batchDone}).
 *
 * <p>Inlined into ProducerBatch: bootstrap and JDK classes only.
 */
public final class BatchDoneAdvice {
  private BatchDoneAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.This Object batch) {
    Fencing.kafka().batchDone(batch);
  }
}
