package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.KafkaSend;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import net.bytebuddy.asm.Advice;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.clients.producer.internals.TransactionManager;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/**
 * On {@code KafkaProducer.send(record, callback)}, before the interceptors and before any metadata request.
 *
 * <p>Tag: the record's headers get {@code fencing} ({@code <token>;<lock>[;<grant>]}) exactly once, and
 * {@code fencing-signature} when the decision has one (existing ones with those keys, and the older form's
 * {@code fencing-token}, {@code fencing-lock}, {@code fencing-grant}, are removed first). Headers are read-only once a record went through a send (KafkaProducer seals
 * them): such a record is copied (topic, partition, timestamp, key, value, headers) and the copy is sent, so the
 * caller's send never fails for it.
 *
 * <p>Block: the method is skipped, so nothing reaches the broker, and the record fails through the producer's own
 * error path for API errors: the callback gets {@code onCompletion(metadata with offset -1, e)} on the calling thread,
 * the returned future fails with {@code e}, and a transaction in progress turns abortable (commit fails; abort works).
 * {@code e} is a {@link KafkaException}, the base type every Kafka application already handles, with the message
 * naming lock, token and reason, and a {@link FencingBlockedException} as its cause for callers that want to tell it
 * apart. A class of our own extending KafkaException is impossible: advice may only use bootstrap classes, which
 * cannot see Kafka's, and the Kafka error types that exist all mean something else (ProducerFencedException is
 * fatal for the producer; authorization errors are too).
 *
 * <p>Pass or tag: a callback given inside a lock scope or an inbound token runs in it ({@link KafkaSend#inContext}).
 *
 * <p>The decision, the header writes, the block's message and cause and the transaction's transition are
 * {@link KafkaSend}'s; what is left here is the producer's error path and the copy of a sealed record. Inlined into KafkaProducer: bootstrap, JDK
 * and kafka-clients classes only, no lambdas.
 */
public final class SendAdvice {
  private SendAdvice() {}

  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
  public static Future<RecordMetadata> enter(
      @Advice.Argument(value = 0, readOnly = false) ProducerRecord<?, ?> record,
      @Advice.Argument(value = 1, readOnly = false) Callback callback,
      @Advice.FieldValue("transactionManager") TransactionManager transactions) {
    // null record: Kafka's validation answers. A transaction's records are noted for its commit's judgement.
    Decision d = record == null ? null
        : KafkaSend.decide(record.topic(), transactions != null && transactions.isTransactional() ? transactions : null);
    if (d != null && d.isBlock()) {
      KafkaException error = new KafkaException(KafkaSend.message(d), KafkaSend.cause(d));
      KafkaSend.abortable(transactions, error);
      if (callback != null) {
        Integer p = record.partition();
        TopicPartition partition = new TopicPartition(record.topic(), p == null ? -1 : p);
        callback.onCompletion(new RecordMetadata(partition, -1L, -1, -1L, -1, -1), error);
      }
      return CompletableFuture.failedFuture(error);
    }
    // The callback runs on the producer's I/O thread: in the sending thread's scope, as the work's own side effect.
    callback = (Callback) KafkaSend.inContext(callback, Callback.class);
    if (d != null && d.isTag()) {
      try {
        KafkaSend.tag(record.headers(), d);
      } catch (IllegalStateException | UnsupportedOperationException readOnly) {
        // Sealed by an earlier send: the copy (whose headers are a fresh copy) is what gets sent.
        record = new ProducerRecord<Object, Object>(record.topic(), record.partition(), record.timestamp(),
            record.key(), record.value(), record.headers());
        KafkaSend.tag(record.headers(), d);
      }
    }
    return null;
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Enter Future<RecordMetadata> blocked,
      @Advice.Return(readOnly = false) Future<RecordMetadata> result) {
    if (blocked != null) {
      result = blocked;
    }
  }
}
