package dev.fencing.fence.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/** {@link PartitionFenceStore} in this JVM's memory ({@code fencing.fence.store=memory}): lost when the JVM ends. */
final class InMemoryPartitionFenceStore implements PartitionFenceStore {

  private record Key(String lock, String topic, int partition) {
  }

  private record Event(String lock, String eventId) {
  }

  private final Map<Key, NavigableMap<Long, Advance>> partitions = new ConcurrentHashMap<>();
  private final Map<Event, Position> events = new ConcurrentHashMap<>();

  @Override
  public Position firstCopy(String lock, String eventId, Position here) {
    Position before = events.putIfAbsent(new Event(lock, eventId), here);
    return before == null ? here : before;
  }

  @Override
  public List<Advance> advances(String lock, String topic, int partition, long from, long to) {
    NavigableMap<Long, Advance> all = partitions.get(new Key(lock, topic, partition));
    List<Advance> out = new ArrayList<>();
    if (all == null || all.isEmpty()) {
      return out;
    }
    Map.Entry<Long, Advance> floor = all.floorEntry(from);
    if (floor == null) {
      out.add(all.firstEntry().getValue());
      if (all.firstKey() < to) {
        out.addAll(all.subMap(all.firstKey(), false, to, true).values());
      }
    } else {
      out.addAll(all.subMap(floor.getKey(), true, to, true).values());
    }
    return out;
  }

  @Override
  public Advance record(String lock, String topic, int partition, Advance advance) {
    NavigableMap<Long, Advance> all = partitions.computeIfAbsent(new Key(lock, topic, partition),
        k -> new ConcurrentSkipListMap<>());
    Advance before = all.putIfAbsent(advance.offset(), advance);
    return before == null ? advance : before;
  }

  /** The token of the partition's latest advance, 0 when none (tests). */
  long latest(String lock, String topic, int partition) {
    NavigableMap<Long, Advance> all = partitions.get(new Key(lock, topic, partition));
    return all == null || all.isEmpty() ? 0 : all.lastEntry().getValue().token();
  }
}
