package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.HeldBatches;
import dev.fencing.agent.bootstrap.KafkaHook;
import net.bytebuddy.asm.Advice;
import org.apache.kafka.clients.MetadataSnapshot;
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
 * <p>Which batches must not leave is the hook's ({@link KafkaHook#buffered}); taking them out and failing them is
 * {@link HeldBatches}'s. What is left here is finding each partition's batches. Inlined into RecordAccumulator:
 * bootstrap, JDK and kafka-clients classes only, no lambdas.
 */
public final class ReadyAdvice {
  private ReadyAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.This RecordAccumulator accumulator, @Advice.Argument(0) MetadataSnapshot metadata,
      @Advice.FieldValue("transactionManager") TransactionManager transactions) throws Throwable {
    if (metadata == null || !Fencing.kafka().bufferedMayBeHeld()) {
      return;
    }
    HeldBatches held = null;
    Cluster cluster = metadata.cluster();
    for (String topic : cluster.topics()) {
      for (PartitionInfo part : cluster.partitionsForTopic(topic)) {
        held = HeldBatches.take(held, accumulator.getDeque(new TopicPartition(part.topic(), part.partition())));
      }
    }
    if (held != null) {
      held.fail(accumulator, transactions, KafkaException.class);
    }
  }
}
