package dev.fencing.fence.kafka;

import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;

/**
 * The rule for one record with a valid token, from its partition's advances (pure logic). Kafka orders records only
 * within a partition, so a record is compared with the fence <em>of its partition as it stood at its offset</em>: the
 * latest advance at or before the offset. That makes the verdict a function of (lock, topic, partition, offset): a
 * record read again after a crash, a rebalance or by another group is judged as it was the first time, and a record a
 * valid holder appended to one partition before its successor's first record there is never refused because the
 * successor's record was read first on another partition.
 * <ul>
 *   <li>no advance yet: the record advances the fence (its offset, token and grant are stored);</li>
 *   <li>the advance at the record's own offset with its token: the record that made it, accepted (redelivery);</li>
 *   <li>token above the advance's: advances;</li>
 *   <li>token below it (strict: not above it): stale;</li>
 *   <li>equal token: accepted when the advance stored no grant or the record carries the same one, else replayed.</li>
 * </ul>
 * A record older than the partition's oldest advance (a group reading history the fence never saw: the fence was
 * enabled, or upgraded, later; or another group started at the end of the partition first) is compared with that
 * oldest advance: the old rule, which refuses whatever is older than it, erring towards refusing.
 */
final class PartitionVerdict {

  enum Kind { ACCEPT, ADVANCE, STALE, REPLAYED }

  private PartitionVerdict() {
  }

  /** The verdict and, for STALE and REPLAYED, the fence token that decided it. */
  record Result(Kind kind, long current) {
  }

  static Result judge(NavigableMap<Long, PartitionFenceStore.Advance> advances, long offset, long token, String grant,
      boolean strict) {
    Map.Entry<Long, PartitionFenceStore.Advance> e = advances.floorEntry(offset);
    if (e == null) {
      e = advances.firstEntry();
    }
    if (e == null) {
      return new Result(Kind.ADVANCE, 0);
    }
    PartitionFenceStore.Advance a = e.getValue();
    if (a.offset() == offset && a.token() == token && Objects.equals(a.grant(), grant)) {
      return new Result(Kind.ACCEPT, token);
    }
    if (token > a.token()) {
      return new Result(Kind.ADVANCE, a.token());
    }
    if (token < a.token() || strict) {
      return new Result(Kind.STALE, a.token());
    }
    if (a.grant() != null && !a.grant().equals(grant)) {
      return new Result(Kind.REPLAYED, a.token());
    }
    return new Result(Kind.ACCEPT, a.token());
  }
}
