package dev.fencing.agent.bootstrap;

/**
 * What the capture advice (Curator, jetcd) reports about the application's own locks; implemented by the agent core
 * ({@code CapturedLocks}). Every method is called on the application's thread that acquires, releases or hears from
 * its coordinator, never on the hot path of a side effect. java.base types only.
 */
public interface CaptureHook {
  // `where` in the reports below names the coordinator the lock lives on, as the application's client reaches it (a
  // ZooKeeper connect string, an etcd cluster id), and `name` the lock there (a ZooKeeper path under the Curator
  // client's namespace, an etcd lock or election name): together with the library, the lock's identity. One path on
  // two ensembles is two locks.

  /**
   * The calling thread acquired the application's lock {@code name} (a ZooKeeper lock path, an etcd lock name) as
   * {@code holdId} (its lock node, its lock key), with {@code token} (the node's czxid, the key's create revision),
   * on the coordinator session {@code sessionId} (ZooKeeper session, etcd lease) which the coordinator knew alive at
   * {@code aliveAtNanos} (System.nanoTime) and ends {@code timeoutMillis} after it last hears from the client.
   * The thread enters the lock's scope until {@link #released}.
   */
  void acquired(String library, String where, String name, String holdId, long token, long sessionId,
      long aliveAtNanos, long timeoutMillis);

  /**
   * The application acquired the lock {@code name} as {@code holdId}, but the agent could not verify it
   * ({@code why}): the lock node is gone or is not the client's session's (the session expired around the
   * acquisition), the lock key is gone or on another lease (the lease ended), or the read failed. The lock is held
   * untrusted until {@link #released}: no token, its side effects refused as after a loss. No thread enters its scope
   * yet: the acquiring thread does with {@link #entered}.
   */
  void unverified(String library, String where, String name, String holdId, String why);

  /** The application released the hold {@code holdId} (or gave up its leadership): its scope ends. */
  void released(String library, String holdId);

  /**
   * The coordinator acknowledged the ZooKeeper session {@code sessionId} alive at {@code aliveAtNanos} (the send time
   * of a {@code sync} the ensemble's leader answered, {@link LockLibraries#zooKeeperSync}), {@code timeoutMillis} being
   * the session timeout then known (0: unchanged).
   */
  void alive(long sessionId, long aliveAtNanos, long timeoutMillis);

  /**
   * The application acquired the lock {@code name} as {@code holdId} with {@code token} on the lease {@code sessionId},
   * reported from a callback thread (jetcd completes its lock future there): no thread enters the scope yet; the one
   * that waits for the lock does, with {@link #entered}. The lease's deadline is the one last reported by
   * {@link #renewed}; for a lease never reported the lock is not trusted.
   */
  void granted(String library, String where, String name, String holdId, long token, long sessionId);

  /** The calling thread waited for the hold {@code holdId} and now runs its critical section: it enters the scope. */
  void entered(String holdId);

  /**
   * The coordinator knew the session (an etcd lease) alive at {@code aliveAtNanos} (the send time of the grant or of
   * an answered keepalive), for {@code timeoutMillis} (its TTL) from then.
   */
  void renewed(long sessionId, long aliveAtNanos, long timeoutMillis);

  /** The coordinator said the session is gone (expired, closed, lease revoked): its holds end at once. */
  void sessionLost(long sessionId, String why);

  /**
   * The application's leader latch on {@code name} (a Curator LeaderLatch's path) gained leadership as {@code holdId}
   * (its latch node) with {@code token} (the node's czxid), on the session {@code sessionId} known alive at
   * {@code aliveAtNanos} that ends {@code timeoutMillis} after the coordinator last hears from the client. A latch has
   * no acquiring thread: the lock decides the side effects of every thread outside a scope (as the JVM-wide lock
   * does), from now until {@link #closed}; {@link #released} ends this leadership's grant.
   */
  void leading(String library, String where, String name, String holdId, long token, long sessionId,
      long aliveAtNanos, long timeoutMillis);

  /**
   * The lock on {@code name} just acquired on this thread ({@link #acquired}) is a leadership (a Curator
   * LeaderSelector's): besides the acquiring thread's scope, it decides the side effects of every thread outside a
   * scope, as a leader latch does ({@link #leading}), until {@link #closed}.
   */
  void leads(String library, String where, String name);

  /**
   * The application closed its leader latch or selector on {@code name}: the lock stops deciding side effects outside
   * scopes.
   */
  void closed(String library, String where, String name);

  CaptureHook NOOP = new CaptureHook() {
    @Override
    public void acquired(String library, String where, String name, String holdId, long token, long sessionId,
        long aliveAtNanos, long timeoutMillis) {}

    @Override
    public void unverified(String library, String where, String name, String holdId, String why) {}

    @Override
    public void released(String library, String holdId) {}

    @Override
    public void alive(long sessionId, long aliveAtNanos, long timeoutMillis) {}

    @Override
    public void granted(String library, String where, String name, String holdId, long token, long sessionId) {}

    @Override
    public void entered(String holdId) {}

    @Override
    public void renewed(long sessionId, long aliveAtNanos, long timeoutMillis) {}

    @Override
    public void sessionLost(long sessionId, String why) {}

    @Override
    public void leading(String library, String where, String name, String holdId, long token, long sessionId,
        long aliveAtNanos, long timeoutMillis) {}

    @Override
    public void leads(String library, String where, String name) {}

    @Override
    public void closed(String library, String where, String name) {}
  };
}
