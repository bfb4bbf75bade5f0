package dev.fencing.agent.instrumentation.kafkaclients;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.HeldBatches;
import dev.fencing.agent.bootstrap.KafkaHook;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.clients.producer.internals.ProducerBatch;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What {@link ReadyAdvice} does with one partition's batches, on real kafka-clients ProducerBatches (the version the
 * module compiles against): the hook's answer decides which are taken out, oldest first, and each taken batch's
 * records fail with the KafkaException a blocked send() gives.
 */
class HeldBatchesTest {
  private static final Decision BLOCK = Decision.block("orders", 7, BlockReason.EXPIRED);

  /** Stands in for RecordAccumulator: the memory of each failed batch comes back. */
  public static final class Accumulator {
    final List<ProducerBatch> deallocated = new ArrayList<>();

    public void deallocate(ProducerBatch batch) {
      deallocated.add(batch);
    }
  }

  @AfterEach
  void uninstall() {
    Fencing.installKafka(KafkaHook.NOOP);
  }

  private static ProducerBatch batch(long createdMs, List<Future<RecordMetadata>> records) {
    ProducerBatch b = new ProducerBatch(new TopicPartition("ledger", 0), MemoryRecords.builder(
        ByteBuffer.allocate(1024), RecordBatch.CURRENT_MAGIC_VALUE, Compression.NONE, TimestampType.CREATE_TIME, 0L),
        createdMs);
    records.add(b.tryAppend(createdMs, null, "v".getBytes(), new Header[0], null, createdMs));
    return b;
  }

  /** The hook holds back the batches in {@code mustNotLeave}, and notes each batch it is asked about. */
  private static void hold(List<ProducerBatch> mustNotLeave, List<Object> asked) {
    Fencing.installKafka(new KafkaHook() {
      @Override
      public Decision decide(String topic) {
        return Decision.pass("orders");
      }

      @Override
      public Decision buffered(Object batch, boolean fail) {
        asked.add(batch);
        return mustNotLeave.contains(batch) ? BLOCK : null;
      }
    });
  }

  @Test
  void theOldestBatchesThatMustNotLeaveAreTakenOutAndFailedWithTheBlock() throws Throwable {
    List<Future<RecordMetadata>> records = new ArrayList<>();
    ProducerBatch old1 = batch(100, records);
    ProducerBatch old2 = batch(200, records);
    ProducerBatch fresh = batch(300, records);
    Deque<ProducerBatch> deque = new ArrayDeque<>(List.of(old1, old2, fresh));
    List<Object> asked = new ArrayList<>();
    hold(List.of(old1, old2), asked);
    Accumulator accumulator = new Accumulator();

    HeldBatches held = HeldBatches.take(null, deque);
    assertThat(HeldBatches.take(held, null)).as("a partition without batches").isSameAs(held);
    held.fail(accumulator, null, KafkaException.class);

    assertThat(deque).containsExactly(fresh);
    assertThat(asked).containsExactly(old1, old2, fresh);
    assertThat(accumulator.deallocated).containsExactly(old1, old2);
    for (Future<RecordMetadata> failed : records.subList(0, 2)) {
      Throwable e = catchThrowable(failed::get);
      assertThat(e).isInstanceOf(ExecutionException.class);
      assertThat(e.getCause()).isInstanceOf(KafkaException.class).hasMessageContaining("lock 'orders', token 7")
          .hasCauseInstanceOf(FencingBlockedException.class);
    }
    assertThat(records.get(2).isDone()).as("the batch that may leave stays buffered").isFalse();
  }

  @Test
  void nothingToHoldTakesNothingAndMakesNothing() throws Throwable {
    List<Future<RecordMetadata>> records = new ArrayList<>();
    ProducerBatch b = batch(300, records);
    Deque<ProducerBatch> deque = new ArrayDeque<>(List.of(b));
    hold(List.of(), new ArrayList<>());

    assertThat(HeldBatches.take(null, deque)).isNull();
    assertThat(deque).containsExactly(b);
  }

  @Test
  void aClosedBatchWasSentBeforeAndIsLeftToKafkasSweep() throws Throwable {
    List<Future<RecordMetadata>> records = new ArrayList<>();
    ProducerBatch sent = batch(100, records);
    sent.close();
    Deque<ProducerBatch> deque = new ArrayDeque<>(List.of(sent));
    List<Object> asked = new ArrayList<>();
    hold(List.of(sent), asked);

    assertThat(HeldBatches.take(null, deque)).isNull();
    assertThat(deque).containsExactly(sent);
    assertThat(asked).isEmpty();
  }
}
