package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.KafkaSend;
import net.bytebuddy.asm.Advice;
import org.apache.kafka.clients.producer.internals.TransactionManager;
import org.apache.kafka.common.KafkaException;

/**
 * {@code KafkaProducer.commitTransaction()}: the commit makes the transaction's records visible to
 * {@code read_committed} consumers, so it is judged by the grants its records toward unfenced topics were tagged
 * under ({@link KafkaSend#committing}). Refused: the transaction turns abortable with a {@link KafkaException} naming
 * lock, token and reason (cause {@code FencingBlockedException}), which the commit throws, as Kafka's own commit
 * failures do; the application's {@code abortTransaction()} then works as for them. Not suppressed: the throw is the
 * point.
 */
public final class CommitTransactionAdvice {
  private CommitTransactionAdvice() {}

  @Advice.OnMethodEnter
  public static void enter(@Advice.FieldValue("transactionManager") TransactionManager transactions) {
    Decision d = KafkaSend.committing(transactions);
    if (d != null) {
      KafkaException error = new KafkaException(KafkaSend.message(d), KafkaSend.cause(d));
      KafkaSend.abortable(transactions, error);
      throw error;
    }
  }
}
