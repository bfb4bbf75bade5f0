package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.KafkaSend;
import net.bytebuddy.asm.Advice;
import org.apache.kafka.clients.producer.internals.TransactionManager;

/** {@code KafkaProducer.beginTransaction()}: the grants its records will be tagged under start afresh. */
public final class BeginTransactionAdvice {
  private BeginTransactionAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.FieldValue("transactionManager") TransactionManager transactions) {
    KafkaSend.transactionBegins(transactions);
  }
}
