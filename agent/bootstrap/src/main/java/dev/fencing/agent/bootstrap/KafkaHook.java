package dev.fencing.agent.bootstrap;

/**
 * What the Kafka producer advice (inlined into KafkaProducer) calls. Implemented by the agent core; java.base types
 * only. Every record sent is a side effect (DESIGN.md section 4).
 */
public interface KafkaHook {
  /** Record header carrying the token as decimal ASCII (DESIGN.md section 5). */
  String TOKEN_HEADER = "fencing-token";
  /** Record header carrying the lock name as UTF-8. */
  String LOCK_HEADER = "fencing-lock";

  /**
   * Decides for one record sent to {@code topic}. Never null; a block decision is turned into the producer's own error
   * path (failed future, callback) by the advice.
   */
  Decision decide(String topic);

  /** Before the core installs the real hook: the bridge's fallback (fail-mode), no topic fenced. */
  KafkaHook NOOP = new KafkaHook() {
    @Override
    public Decision decide(String topic) {
      return Fencing.decide(Channel.KAFKA, true, false);
    }
  };
}
