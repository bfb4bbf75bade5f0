package dev.fencing.agent.bootstrap;

/**
 * What the Kafka client advice (inlined into KafkaProducer, KafkaConsumer and ConsumerRecords) calls. Implemented by the agent core; java.base types
 * only. Every record sent is a side effect (DESIGN.md section 4).
 */
public interface KafkaHook {
  /** Record header carrying the token as decimal ASCII (DESIGN.md section 5). */
  String TOKEN_HEADER = "fencing-token";
  /** Record header carrying the lock name as UTF-8. */
  String LOCK_HEADER = "fencing-lock";
  /** Record header carrying the token's signature (ASCII) when fencing.signing.key-file is set (absent otherwise). */
  String SIGNATURE_HEADER = "fencing-signature";
  /** Record header carrying the id of the grant that issued the token (ASCII), when the decision has one. */
  String GRANT_HEADER = "fencing-grant";

  /**
   * Decides for one record sent to {@code topic}. Never null; a block decision is turned into the producer's own error
   * path (failed future, callback) by the advice.
   */
  Decision decide(String topic);

  /**
   * Cross-hop propagation for consumers: the iterator over a poll's records, wrapped so that while the application
   * processes a record (from next() to the following next(), the end of the iteration or the next poll), the record's
   * (fencing-lock, fencing-token) are current on the polling thread ({@link TokenContext}).
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
