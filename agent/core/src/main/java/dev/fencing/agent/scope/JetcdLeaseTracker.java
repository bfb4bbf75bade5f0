package dev.fencing.agent.scope;

import dev.fencing.agent.scope.CapturedLocks.Hold;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The liveness of captured jetcd locks: per etcd lease the application's client was granted or kept alive, when it
 * was last known alive and its TTL. An answered keepalive renews the holds on that lease; a lock granted on a lease
 * never seen is not trusted at all.
 */
final class JetcdLeaseTracker {
  /** The holds of every captured lock (a live view): those on a lease are the ones its keepalives renew. */
  private final Collection<Hold> holds;
  private final long marginNanos;
  /** Per etcd lease: {when it was last known alive, its TTL}, both in nanoseconds. */
  private final Map<Long, long[]> leases = new ConcurrentHashMap<>();

  JetcdLeaseTracker(Collection<Hold> holds, long marginNanos) {
    this.holds = holds;
    this.marginNanos = marginNanos;
  }

  /** {when {@code leaseId} was last known alive, its TTL} in nanoseconds; null for a lease never seen. */
  long[] lease(long leaseId) {
    return leases.get(leaseId);
  }

  /** Lease {@code leaseId} was granted or kept alive at {@code aliveAtNanos} for {@code timeoutMillis}. */
  void renewed(long leaseId, long aliveAtNanos, long timeoutMillis) {
    long timeout = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    leases.merge(leaseId, new long[] {aliveAtNanos, timeout}, (a, b) -> b[0] - a[0] > 0 ? b : a);
    for (Hold h : holds) {
      if (h.grant != null && h.sessionId == leaseId) {
        h.timeoutNanos = timeout;
        h.lock.runtime.state().renewed(h.grant, aliveAtNanos + timeout - marginNanos);
      }
    }
  }

  /** The lease (or session) is gone. */
  void lost(long leaseId) {
    leases.remove(leaseId);
  }
}
