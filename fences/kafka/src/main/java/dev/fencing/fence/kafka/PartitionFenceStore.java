package dev.fencing.fence.kafka;

import java.util.List;

/**
 * Where the Kafka fence keeps its state: per (lock, topic, partition), the list of <em>advances</em>, each the offset of
 * the record that raised the partition's fence, its token and its grant. The verdict on a record is a function of its
 * partition's advances at and before its offset (see {@link PartitionVerdict}), so a record read again after a crash or
 * a rebalance, or by another consumer group, gets the verdict it got the first time.
 *
 * <p>Implementations: {@link JdbcPartitionFenceStore} (durable, shared: table {@value JdbcPartitionFenceStore#TABLE})
 * and {@link InMemoryPartitionFenceStore} (one JVM). A store that cannot answer throws {@link
 * dev.fencing.fence.store.FenceStoreException}; the fence then waits and asks again, it never decides without it.
 */
interface PartitionFenceStore {

  /** Where a record is: its topic, partition and offset. */
  record Position(String topic, int partition, long offset) {
  }

  /** One advance: the record at {@code offset} raised the partition's fence to {@code token} ({@code grant}: null if none). */
  record Advance(long offset, long token, String grant) {
  }

  /**
   * The advances needed to judge offsets {@code from} to {@code to} of one partition, by offset: the latest at or
   * before {@code from}, every one in between, and, when none is at or before {@code from}, the first one (the
   * partition's oldest advance, possibly after {@code to}). Empty when the partition has none.
   */
  List<Advance> advances(String lock, String topic, int partition, long from, long to);

  /**
   * Stores {@code advance} unless the partition already has one at its offset (another consumer judged the same
   * record first), and returns the advance stored at that offset.
   */
  Advance record(String lock, String topic, int partition, Advance advance);

  /**
   * Stores {@code here} as the first record of outbox event {@code eventId} of {@code lock} unless one is stored, and
   * returns the one stored: a record is a later copy of its event exactly when the answer is another position, so the
   * same record read again (after a crash, a rebalance, by another group) is never its own duplicate.
   */
  Position firstCopy(String lock, String eventId, Position here);
}
