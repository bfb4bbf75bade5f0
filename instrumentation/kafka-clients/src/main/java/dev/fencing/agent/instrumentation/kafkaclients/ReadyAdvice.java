package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.HeldBatches;
import dev.fencing.agent.bootstrap.KafkaHook;
import dev.fencing.agent.bootstrap.KafkaSend;
import java.util.Deque;
import net.bytebuddy.asm.Advice;
import org.apache.kafka.clients.MetadataSnapshot;
import org.apache.kafka.clients.producer.internals.ProducerBatch;
import org.apache.kafka.clients.producer.internals.RecordAccumulator;
import org.apache.kafka.clients.producer.internals.TransactionManager;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * On {@code RecordAccumulator.ready}, before it looks at the partitions: while some buffered batch may have to be
 * held ({@link KafkaHook#bufferedMayBeHeld}, false in normal operation, so this costs one check per turn), each
 * partition's batches never sent are judged oldest first, and those that must not leave are taken out and failed
 * the way the producer fails undrained batches when a transaction aborts: appends stopped, callbacks and futures
 * completed with the same {@link KafkaException} a blocked send() gives (cause {@link FencingBlockedException}), a
 * transaction in progress turned abortable, the buffer memory returned. Callbacks run on the I/O thread, as for any
 * completed batch, after the partition's lock is released.
 *
 * <p>Which batches must not leave is the hook's ({@link KafkaHook#buffered}); the collection, the block's message and
 * cause and the transaction's transition are {@link HeldBatches} and {@link KafkaSend}. Inlined into
 * RecordAccumulator: bootstrap, JDK and kafka-clients classes only, no lambdas.
 */
public final class ReadyAdvice {
  private ReadyAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.This RecordAccumulator accumulator, @Advice.Argument(0) MetadataSnapshot metadata,
      @Advice.FieldValue("transactionManager") TransactionManager transactions) {
    KafkaHook hook = Fencing.kafka();
    if (metadata == null || !hook.bufferedMayBeHeld()) {
      return;
    }
    HeldBatches held = null;
    Cluster cluster = metadata.cluster();
    for (String topic : cluster.topics()) {
      for (PartitionInfo part : cluster.partitionsForTopic(topic)) {
        Deque<ProducerBatch> deque = accumulator.getDeque(new TopicPartition(part.topic(), part.partition()));
        if (deque == null) {
          continue;
        }
        synchronized (deque) {
          // Oldest first; a closed batch was sent before, and Kafka's sweep fails those.
          for (ProducerBatch b = deque.peekFirst(); b != null && !b.isClosed(); b = deque.peekFirst()) {
            Decision d = hook.buffered(b, true);
            if (d == null) {
              break;
            }
            deque.pollFirst();
            b.abortRecordAppends();
            held = HeldBatches.add(held, b, d);
          }
        }
      }
    }
    for (int i = 0; i < HeldBatches.size(held); i++) {
      ProducerBatch batch = (ProducerBatch) held.batch(i);
      Decision d = held.decision(i);
      KafkaException error = new KafkaException(KafkaSend.message(d), KafkaSend.cause(d));
      KafkaSend.abortable(transactions, error);
      // Each batch on its own: one that could not be failed must not keep the others (and flush()) waiting.
      try {
        if (!batch.isDone()) {
          batch.abort(error);
        }
      } catch (RuntimeException alreadyCompleted) {
        // completed meanwhile: its records have their outcome
      } finally {
        accumulator.deallocate(batch);
      }
    }
  }
}
