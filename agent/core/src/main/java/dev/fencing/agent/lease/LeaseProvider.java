package dev.fencing.agent.lease;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A linearizable coordinator that grants leases and locks with a fencing token. etcd implements it
 * ({@link EtcdLeaseProvider}); ZooKeeper or a Kubernetes Lease could follow. The {@link LeaseKeeper} drives it and
 * owns all timing: providers only talk to the coordinator.
 */
public interface LeaseProvider extends AutoCloseable {
  /** A granted lease. */
  final class Lease {
    public final long id;
    public final long ttlSeconds;

    public Lease(long id, long ttlSeconds) {
      this.id = id;
      this.ttlSeconds = ttlSeconds;
    }
  }

  /** The lock, acquired. {@code token} is the lock key's create revision. */
  final class Acquired {
    public final long token;
    public final long clusterId;
    public final String key;

    public Acquired(long token, long clusterId, String key) {
      this.token = token;
      this.clusterId = clusterId;
      this.key = key;
    }
  }

  /** Who holds a lock, as the coordinator sees it (doctor). */
  final class Holder {
    public final String holderId;
    public final long token;
    public final long leaseId;
    public final long remainingTtlSeconds;

    public Holder(String holderId, long token, long leaseId, long remainingTtlSeconds) {
      this.holderId = holderId;
      this.token = token;
      this.leaseId = leaseId;
      this.remainingTtlSeconds = remainingTtlSeconds;
    }
  }

  /** Checks the coordinator answers; returns its cluster id. */
  long clusterId(Duration timeout) throws Exception;

  Lease grant(Duration ttl, Duration timeout) throws Exception;

  /** Sends one keepalive; completes with the remaining TTL in seconds, or a value <= 0 when the lease is gone. */
  CompletableFuture<Long> keepAlive(long leaseId);

  /** Campaigns for {@code lock} under {@code leaseId}; completes when this process holds it. */
  CompletableFuture<Acquired> campaign(String lock, long leaseId, String holderId);

  /** Calls {@code onDeleted} once if the key of {@code acquired} is deleted. Closing stops watching. */
  AutoCloseable watchDeletion(Acquired acquired, Runnable onDeleted);

  /**
   * Revokes the lease (deleting the lock key with it); best effort within {@code timeout}. Returns false when the
   * coordinator could not be asked: the lease then lives on there until its TTL runs out (longer after an etcd
   * restart, which gives every lease its full TTL again), and the caller may try again once it is reachable.
   */
  boolean revoke(long leaseId, Duration timeout);

  /**
   * The coordinator's current revision (etcd: the store revision). Every lock key created later gets a higher create
   * revision, so it is a token no past holder exceeds and every future holder does (fence reset with no holder).
   */
  long revision(Duration timeout) throws Exception;

  /** The current holder of {@code lock}, if any. */
  Optional<Holder> holder(String lock, Duration timeout) throws Exception;

  /**
   * Called by the lease keeper after a request failed, before it tries again: a provider whose transport waits out
   * its own reconnect backoff (etcd's gRPC channel) tries to connect now, so the keeper's next request can reach a
   * coordinator that is back. Does nothing by default (ZooKeeper's client reconnects on its own schedule).
   */
  default void reconnect() {
  }

  @Override
  void close();
}
