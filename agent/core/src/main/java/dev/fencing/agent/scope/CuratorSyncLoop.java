package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.LockLibraries;
import dev.fencing.agent.scope.CapturedLocks.Hold;
import dev.fencing.agent.threads.AgentThreads;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The liveness of captured Curator locks: while a lock of a ZooKeeper session is held, a {@code sync} on the
 * application's own handle every third of the session timeout, from an agent thread started with the first one;
 * each answered sync renews the session's holds ({@link #alive}). Only the ensemble's leader answers a sync, so a
 * follower cut from the quorum (which keeps answering pings for {@code syncLimit * tickTime}) renews nothing.
 */
final class CuratorSyncLoop {
  /** The holds of every captured lock (a live view): those of a session are the ones its syncs renew. */
  private final Collection<Hold> holds;
  private final long marginNanos;
  /** Per ZooKeeper session: the send time of its last answered sync (the renewal after the next one uses it). */
  private final Map<Long, Long> lastAnswered = new ConcurrentHashMap<>();
  /** Per ZooKeeper session of a held Curator lock: when its next sync is due (System.nanoTime). */
  private final Map<Long, long[]> syncDue = new ConcurrentHashMap<>();
  /** Sends the syncs ({@link #syncLoop}); started with the first Curator lock captured. */
  private Thread syncer; // guarded by this

  CuratorSyncLoop(Collection<Hold> holds, long marginNanos) {
    this.holds = holds;
    this.marginNanos = marginNanos;
  }

  /** A Curator lock of ZooKeeper session {@code sessionId} is held: syncs keep it trusted, the first one now. */
  void keepSyncing(long sessionId) {
    syncDue.putIfAbsent(sessionId, new long[] {System.nanoTime()});
    Thread t;
    synchronized (this) {
      if (syncer == null) {
        syncer = AgentThreads.newThread(this::syncLoop, "fencing-agent-capture-sync");
        syncer.start();
      }
      t = syncer;
    }
    LockSupport.unpark(t);
  }

  /**
   * Every third of the session timeout, for each ZooKeeper session of a held Curator lock: a {@code sync} on the
   * application's handle ({@link LockLibraries#zooKeeperSync}), whose answer renews the session's locks
   * ({@link #alive}). A session none of whose locks is held any more is dropped.
   */
  private void syncLoop() {
    while (true) {
      long now = System.nanoTime();
      long next = now + TimeUnit.SECONDS.toNanos(1);
      for (Map.Entry<Long, long[]> e : syncDue.entrySet()) {
        long interval = syncInterval(e.getKey());
        if (interval <= 0) {
          syncDue.remove(e.getKey());
          continue;
        }
        long[] due = e.getValue();
        if (now - due[0] >= 0) {
          LockLibraries.zooKeeperSync(e.getKey()); // not sent (handle gone): no answer, the lock runs out of trust
          due[0] = now + interval;
        }
        next = due[0] - next < 0 ? due[0] : next;
      }
      LockSupport.parkNanos(Math.max(next - System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(1)));
    }
  }

  /** A third of the shortest session timeout of the locks held on {@code sessionId}; 0 when none is held. */
  private long syncInterval(long sessionId) {
    long shortest = 0;
    for (Hold h : holds) {
      if (h.sessionId == sessionId && h.timeoutNanos > 0 && (shortest == 0 || h.timeoutNanos < shortest)) {
        shortest = h.timeoutNanos;
      }
    }
    return shortest / 3;
  }

  /**
   * A sync of {@code sessionId} sent at {@code aliveAtNanos} was answered. A ZooKeeper follower forwards its clients'
   * syncs to the leader, but tells the leader (whose clock expires sessions) of its clients' activity only in its own
   * next ping: what the leader surely heard of when a sync is answered is the previous answered one. The deadline
   * moves to that one's send time plus the session timeout minus the margin, as for the agent's own ZooKeeper lease.
   */
  void alive(long sessionId, long aliveAtNanos, long timeoutMillis) {
    if (holds.isEmpty()) {
      lastAnswered.clear();
      return;
    }
    Long previous = lastAnswered.put(sessionId, aliveAtNanos);
    if (previous == null) {
      return;
    }
    for (Hold h : holds) {
      if (h.grant != null && h.sessionId == sessionId) {
        if (timeoutMillis > 0) {
          h.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        }
        h.lock.runtime.state().renewed(h.grant, previous + h.timeoutNanos - marginNanos);
      }
    }
  }
}
