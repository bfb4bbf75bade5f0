package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Fencing;
import net.bytebuddy.asm.Advice;

/**
 * On the exit of {@code ProducerBatch.tryAppend}, which {@code KafkaProducer.send} reaches on the sending thread: the
 * record joined this batch, which now holds a record of the grant that send was tagged under
 * ({@link dev.fencing.agent.bootstrap.KafkaHook#appended}). A failed append (the batch is full) returns null.
 *
 * <p>Inlined into ProducerBatch: bootstrap and JDK classes only.
 */
public final class AppendAdvice {
  private AppendAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.This Object batch, @Advice.Return Object appended) {
    if (appended != null) {
      Fencing.kafka().appended(batch);
    }
  }
}
