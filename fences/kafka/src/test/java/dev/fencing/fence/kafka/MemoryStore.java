package dev.fencing.fence.kafka;

import dev.fencing.fence.store.FenceState;
import java.util.List;

/**
 * The in-memory partition store, with the lock-level views the logic tests read: {@link #check} sets the fence of
 * partition t-0 before the log starts, {@link #current} and {@link #state} read its latest advance.
 */
final class MemoryStore implements PartitionFenceStore {

  final InMemoryPartitionFenceStore store = new InMemoryPartitionFenceStore();

  @Override
  public List<Advance> advances(String lock, String topic, int partition, long from, long to) {
    return store.advances(lock, topic, partition, from, to);
  }

  @Override
  public Advance record(String lock, String topic, int partition, Advance advance) {
    return store.record(lock, topic, partition, advance);
  }

  @Override
  public Position firstCopy(String lock, String eventId, Position here) {
    return store.firstCopy(lock, eventId, here);
  }

  /** The fence of t-0 at {@code token} from before its first record (offset -1). */
  void check(String lock, long token) {
    store.record(lock, "t", 0, new Advance(-1, token, null));
  }

  long current(String lock) {
    return store.latest(lock, "t", 0);
  }

  FenceState state(String lock) {
    List<Advance> all = store.advances(lock, "t", 0, Long.MAX_VALUE, Long.MAX_VALUE);
    return all.isEmpty() ? FenceState.NONE : new FenceState(all.get(0).token(), all.get(0).grant());
  }
}
