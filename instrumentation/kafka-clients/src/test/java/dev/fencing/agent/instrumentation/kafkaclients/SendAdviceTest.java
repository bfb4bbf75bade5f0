package dev.fencing.agent.instrumentation.kafkaclients;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.KafkaHook;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link SendAdvice}'s body run as a plain method on real kafka-clients records (the version the module compiles
 * against), with a fixed hook in place of the core: what the record carries and what the caller gets.
 */
class SendAdviceTest {
  @AfterEach
  void uninstall() {
    Fencing.installKafka(KafkaHook.NOOP);
  }

  /** The hook answers; without a gate installed, a hook failure is answered by the bridge's fallback. */
  private static void decide(KafkaHook hook) {
    Fencing.installKafka(hook);
  }

  private static List<String> values(ProducerRecord<?, ?> record, String key) {
    List<String> values = new ArrayList<>();
    for (Header h : record.headers().headers(key)) {
      values.add(new String(h.value(), StandardCharsets.UTF_8));
    }
    return values;
  }

  @Test
  void aTaggedRecordCarriesEachHeaderOnceReplacingWhatTheApplicationSet() {
    decide(topic -> Decision.tag("orders", 7, null, "1a2b"));
    ProducerRecord<String, String> record = new ProducerRecord<>("ledger", "k", "v");
    record.headers().add("fencing", "6;orders;old".getBytes(StandardCharsets.US_ASCII));
    record.headers().add("fencing-token", "6".getBytes(StandardCharsets.US_ASCII));
    record.headers().add("fencing-signature", "old".getBytes(StandardCharsets.US_ASCII));
    record.headers().add("trace", "t1".getBytes(StandardCharsets.US_ASCII));

    assertThat(SendAdvice.enter(record, null, null)).as("the send goes on").isNull();

    assertThat(values(record, "fencing")).containsExactly("7;orders;1a2b");
    assertThat(values(record, "fencing-token")).as("the older form is replaced, not kept beside").isEmpty();
    assertThat(values(record, "fencing-signature")).as("unsigned: an old signature would not match").isEmpty();
    assertThat(values(record, "trace")).containsExactly("t1");
  }

  @Test
  void aSealedRecordIsNeverTheCallersFailure() {
    decide(topic -> Decision.tag("orders", 7));
    ProducerRecord<String, String> record = new ProducerRecord<>("ledger", "k", "v");
    ((RecordHeaders) record.headers()).setReadOnly(); // what an earlier send leaves

    assertThat(SendAdvice.enter(record, null, null)).isNull();
    assertThat(values(record, "fencing")).as("the copy is tagged and sent instead").isEmpty();
  }

  @Test
  void aBlockedRecordFailsThroughTheCallbackAndTheFutureWithTheSameKafkaException() {
    Decision block = Decision.block("orders", 7, BlockReason.EXPIRED);
    decide(topic -> block);
    ProducerRecord<String, String> record = new ProducerRecord<>("ledger", 3, "k", "v");
    List<RecordMetadata> metadata = new ArrayList<>();
    List<Exception> errors = new ArrayList<>();

    Future<RecordMetadata> result = SendAdvice.enter(record, (m, e) -> {
      metadata.add(m);
      errors.add(e);
    }, null);

    assertThat(result).isNotNull().isDone();
    Throwable failure = org.assertj.core.api.Assertions.catchThrowable(result::get);
    assertThat(failure).isInstanceOf(ExecutionException.class);
    KafkaException error = (KafkaException) failure.getCause();
    assertThat(error).hasMessageContaining("lock 'orders', token 7").hasCauseInstanceOf(FencingBlockedException.class);
    assertThat(((FencingBlockedException) error.getCause()).decision()).isSameAs(block);
    assertThat(errors).containsExactly(error);
    assertThat(metadata).singleElement().satisfies(m -> {
      assertThat(m.topic()).isEqualTo("ledger");
      assertThat(m.partition()).isEqualTo(3);
      assertThat(m.offset()).isEqualTo(-1L);
    });
    assertThat(record.headers().toArray()).as("nothing tagged").isEmpty();
  }

  @Test
  void aFailingHookNeverReachesTheCallerAndTheRecordGoesOnUntagged() {
    IllegalStateException broken = new IllegalStateException("broken");
    decide(topic -> {
      throw broken;
    });
    ProducerRecord<String, String> record = new ProducerRecord<>("ledger", "k", "v");

    assertThat(SendAdvice.enter(record, null, null)).isNull();
    assertThat(record.headers().toArray()).isEmpty();
    assertThat(SendAdvice.enter(null, null, null)).as("Kafka's own validation answers a null record").isNull();
  }
}
