package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FixedError;
import dev.fencing.agent.bootstrap.KafkaSend;
import java.util.function.Function;
import net.bytebuddy.asm.Advice;
import org.apache.kafka.common.KafkaException;

/**
 * On {@code ProducerBatch.completeExceptionally(topLevel, perRecord)}: a batch {@link DeliveryTimeoutAdvice} expired
 * because it must not leave fails with the block exception a blocked send() gives, not the sweep's TimeoutException.
 * Any other failure passes unchanged (one map lookup, only while such a batch exists).
 *
 * <p>Inlined into ProducerBatch: bootstrap, JDK and kafka-clients classes only, no lambdas.
 */
public final class BatchFailureAdvice {
  private BatchFailureAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.This Object batch,
      @Advice.Argument(value = 0, readOnly = false) RuntimeException topLevel,
      @Advice.Argument(value = 1, readOnly = false) Function<Integer, RuntimeException> perRecord) {
    Decision d = Fencing.kafka().expiredHeld(batch);
    if (d != null) {
      KafkaException error = new KafkaException(KafkaSend.message(d), KafkaSend.cause(d));
      topLevel = error;
      perRecord = new FixedError(error);
    }
  }
}
