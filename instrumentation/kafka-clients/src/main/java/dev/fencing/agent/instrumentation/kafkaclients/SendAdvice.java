package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.KafkaHook;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import net.bytebuddy.asm.Advice;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.clients.producer.internals.TransactionManager;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;

/**
 * On {@code KafkaProducer.send(record, callback)}, before the interceptors and before any metadata request.
 *
 * <p>Tag: the record's headers get {@code fencing-token} and {@code fencing-lock} exactly once, and
 * {@code fencing-signature} and {@code fencing-grant} when the decision has them (existing ones with those keys are
 * removed first). Headers are read-only once a record went through a send (KafkaProducer seals
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
 * <p>Inlined into KafkaProducer: bootstrap, JDK and kafka-clients classes only, no lambdas.
 */
public final class SendAdvice {
  private SendAdvice() {}

  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
  public static Future<RecordMetadata> enter(
      @Advice.Argument(value = 0, readOnly = false) ProducerRecord<?, ?> record,
      @Advice.Argument(1) Callback callback,
      @Advice.FieldValue("transactionManager") TransactionManager transactions) {
    if (record == null) {
      return null; // KafkaProducer's own validation answers
    }
    Decision d;
    try {
      d = Fencing.kafka().decide(record.topic());
    } catch (Throwable agentError) {
      try {
        Fencing.hookFailed(Channel.KAFKA, false, agentError); // counted and logged once per interval
      } catch (Throwable unreachable) {
        // the agent's classes are out of this loader's reach: nothing to count with
      }
      return null; // never the application's error: the record goes on untagged
    }
    if (d.isBlock()) {
      KafkaException error = new KafkaException(d.blockMessage(Channel.KAFKA),
          new FencingBlockedException(Channel.KAFKA, d));
      if (transactions != null) {
        try {
          // As KafkaProducer does for its own errors; a no-op unless transactional.
          transactions.maybeTransitionToErrorState(error);
        } catch (RuntimeException noTransactionInProgress) {
          // Transactional producer outside a transaction: Kafka would refuse the send itself; nothing to abort.
        }
      }
      if (callback != null) {
        Integer partition = record.partition();
        callback.onCompletion(new RecordMetadata(new TopicPartition(record.topic(),
            partition == null ? -1 : partition), -1L, -1, -1L, -1, -1), error);
      }
      return CompletableFuture.failedFuture(error);
    }
    if (d.isTag()) {
      byte[] token = d.tokenText().getBytes(StandardCharsets.US_ASCII);
      byte[] lock = d.lock().getBytes(StandardCharsets.UTF_8);
      String signatureText = d.signature();
      byte[] signature = signatureText == null ? null : signatureText.getBytes(StandardCharsets.US_ASCII);
      String grantText = d.grant();
      byte[] grant = grantText == null ? null : grantText.getBytes(StandardCharsets.US_ASCII);
      Headers h = record.headers();
      try {
        h.remove(KafkaHook.TOKEN_HEADER);
      } catch (IllegalStateException | UnsupportedOperationException readOnly) {
        // Sealed by an earlier send: the copy (whose headers are a fresh copy) is what gets sent.
        ProducerRecord<Object, Object> copy = new ProducerRecord<Object, Object>(record.topic(), record.partition(),
            record.timestamp(), record.key(), record.value(), record.headers());
        record = copy;
        h = copy.headers();
        h.remove(KafkaHook.TOKEN_HEADER);
      }
      h.remove(KafkaHook.LOCK_HEADER);
      h.remove(KafkaHook.SIGNATURE_HEADER);
      h.remove(KafkaHook.GRANT_HEADER);
      h.add(KafkaHook.TOKEN_HEADER, token);
      h.add(KafkaHook.LOCK_HEADER, lock);
      if (signature != null) {
        h.add(KafkaHook.SIGNATURE_HEADER, signature);
      }
      if (grant != null) {
        h.add(KafkaHook.GRANT_HEADER, grant);
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
