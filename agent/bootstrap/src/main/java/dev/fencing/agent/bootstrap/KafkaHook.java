package dev.fencing.agent.bootstrap;

import dev.fencing.protocol.KafkaHeaderNames;

/**
 * What the Kafka client advice (inlined into KafkaProducer, KafkaConsumer and ConsumerRecords) calls. Implemented by the agent core; java.base types
 * only. Every record sent is a side effect (docs/DESIGN.md section 4).
 */
public interface KafkaHook {
  /**
   * Record header carrying token, lock and, when the decision has one, the grant id in one ASCII value,
   * {@code <token>;<lock>[;<grant>]} (docs/DESIGN.md section 5).
   */
  String HEADER = KafkaHeaderNames.FENCING;
  /** Record header carrying the token's signature (ASCII) when fencing.signing.key-file is set (absent otherwise). */
  String SIGNATURE_HEADER = KafkaHeaderNames.SIGNATURE;
  /** The older form's token header: read from consumed records, replaced on sent ones, never written. */
  String LEGACY_TOKEN_HEADER = KafkaHeaderNames.LEGACY_TOKEN;
  /** The older form's lock header, as {@link #LEGACY_TOKEN_HEADER}. */
  String LEGACY_LOCK_HEADER = KafkaHeaderNames.LEGACY_LOCK;
  /** The older form's grant header, as {@link #LEGACY_TOKEN_HEADER}. */
  String LEGACY_GRANT_HEADER = KafkaHeaderNames.LEGACY_GRANT;

  /**
   * Decides for one record sent to {@code topic}. Never null; a block decision is turned into the producer's own error
   * path (failed future, callback) by the advice.
   */
  Decision decide(String topic);

  /**
   * A producer batch (an {@code org.apache.kafka.clients.producer.internals.ProducerBatch}) about to be drained for
   * sending, or waiting for it: null when its records may leave now; otherwise the block decision to fail it with.
   * Records toward a fenced topic always may (the fence judges their token); toward an unfenced one only while the
   * grant they were tagged under is still held, before its local deadline. {@code fail} true: the caller fails the
   * batch now, and each of its records is counted as blocked; false: only asking (the batch is held back).
   */
  default Decision buffered(Object batch, boolean fail) {
    return null;
  }

  /**
   * Whether a producer's drain should look at its batches with {@link #buffered} before taking them: false while no
   * buffered batch can be kept from leaving (the current grant is the one every buffered record was tagged under),
   * so that a drain costs nothing extra.
   */
  default boolean bufferedMayBeHeld() {
    return false;
  }

  /**
   * The producer's I/O thread starts ({@code true}) or ends ({@code false}) its sweep for batches that reached their
   * delivery timeout (RecordAccumulator.expiredBatches): only there may {@link #expireHeld} expire a batch.
   */
  default void expirySweep(boolean started) {}

  /**
   * Asked for each batch the sweep looks at that has not reached its delivery timeout: non-null when the batch is
   * one that must not leave (a retry of a batch sent before the deadline, say) and the sweep should expire it now;
   * its records are then counted as blocked, and {@link #expiredHeld} gives the decision when Kafka fails it. Null
   * outside a sweep, so that a batch in flight is never failed while its request may still be answered.
   */
  default Decision expireHeld(Object batch) {
    return null;
  }

  /**
   * The record being sent on this thread (inside {@code KafkaProducer.send}) joined {@code batch}
   * ({@code ProducerBatch.tryAppend}): the batch now holds a record of the grant that send was tagged under.
   */
  default void appended(Object batch) {}

  /**
   * As {@link #decide(String)}, for a record of the transaction in progress of a transactional producer
   * ({@code transactions}: its TransactionManager; null for a producer that is not transactional).
   */
  default Decision decide(String topic, Object transactions) {
    return decide(topic);
  }

  /** The transactional producer of {@code transactions} (its TransactionManager) begins a transaction. */
  default void transactionBegins(Object transactions) {}

  /**
   * The transactional producer of {@code transactions} is about to commit: the decision that blocks the commit
   * (records of the transaction toward an unfenced topic whose grant no longer holds), or null to let it commit.
   */
  default Decision committing(Object transactions) {
    return null;
  }

  /** Kafka completed, failed or aborted {@code batch}: its records are no longer buffered. */
  default void batchDone(Object batch) {}

  /** Kafka split {@code batch} into {@code parts} (a batch too large for the broker): they hold its records. */
  default void batchSplit(Object batch, Iterable<?> parts) {}

  /** For a batch failing: the decision {@link #expireHeld} expired it for (once), or null. */
  default Decision expiredHeld(Object batch) {
    return null;
  }

  /**
   * Cross-hop propagation for consumers: the iterator over a poll's records, wrapped so that while the application
   * processes a record (from next() to the following next(), the end of the iteration or the next poll), the record's
   * lock and token ({@link #HEADER}, or the older form's headers) are current on the polling thread
   * ({@link TokenContext}).
   */
  default java.util.Iterator<?> consumed(java.util.Iterator<?> records) {
    return records;
  }

  /** A new poll on this thread: processing of the previous batch's last record is over. */
  default void polled() {}

  /** Before the core installs the real hook: the bridge's fallback (fail-mode), no topic fenced. */
  KafkaHook NOOP = new KafkaHook() {
    @Override
    public Decision decide(String topic) {
      return Fencing.decide(Channel.KAFKA, true, false);
    }
  };
}
