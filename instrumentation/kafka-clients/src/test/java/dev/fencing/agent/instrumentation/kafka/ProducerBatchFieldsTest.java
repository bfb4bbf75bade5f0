package dev.fencing.agent.instrumentation.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.apache.kafka.clients.producer.internals.ProducerBatch;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** The fields the buffered-batch check reads, on a real kafka-clients ProducerBatch. */
class ProducerBatchFieldsTest {
  @Test
  void readsTopicAndRecordCount() throws Throwable {
    MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1024), RecordBatch.CURRENT_MAGIC_VALUE,
        Compression.NONE, TimestampType.CREATE_TIME, 0L);
    ProducerBatch batch = new ProducerBatch(new TopicPartition("orders-events", 3), builder, 123_456L);
    batch.tryAppend(123_456L, null, "v1".getBytes(), new Header[0], null, 123_456L);
    batch.tryAppend(123_457L, null, "v2".getBytes(), new Header[0], null, 123_457L);

    ProducerBatchFields.Lookup lookup = ProducerBatchFields.of(ProducerBatch.class);
    assertThat(lookup.failure).isNull();
    assertThat(lookup.accessors.topic(batch)).isEqualTo("orders-events");
    assertThat(lookup.accessors.recordCount(batch)).isEqualTo(2);
  }

  @Test
  void aClassWithoutThoseFieldsIsReportedNotThrown() {
    ProducerBatchFields.Lookup lookup = ProducerBatchFields.of(String.class);
    assertThat(lookup.accessors).isNull();
    assertThat(lookup.failure).isInstanceOf(ReflectiveOperationException.class);
  }
}
