package dev.fencing.agent.token;

/**
 * One acquisition of the lock: the token and what the guard found about it. Only the deadline changes, and only
 * forward, as keepalives are acknowledged.
 */
public final class Grant {
  private final String lock;
  private final long token;
  private final long leaseId;
  private final long clusterId;
  private final boolean reused;
  private final boolean overflow;
  private final long grantedAtNanos;
  private final String signature;
  private final String id;
  private volatile long deadlineNanos;

  Grant(String lock, long token, long leaseId, long clusterId, boolean reused, boolean overflow, long grantedAtNanos,
      long deadlineNanos) {
    this(lock, token, leaseId, clusterId, reused, overflow, grantedAtNanos, deadlineNanos, null);
  }

  Grant(String lock, long token, long leaseId, long clusterId, boolean reused, boolean overflow, long grantedAtNanos,
      long deadlineNanos, String signature) {
    this.signature = signature;
    this.lock = lock;
    this.token = token;
    this.leaseId = leaseId;
    this.id = Long.toHexString(leaseId);
    this.clusterId = clusterId;
    this.reused = reused;
    this.overflow = overflow;
    this.grantedAtNanos = grantedAtNanos;
    this.deadlineNanos = deadlineNanos;
  }

  public String lock() {
    return lock;
  }

  public long token() {
    return token;
  }

  public long leaseId() {
    return leaseId;
  }

  /**
   * The grant's id as carried beside the token (the lease id in lower-case hex): a new lease for every grant, so two
   * grants that got the same token (an etcd restored from a snapshot) differ in it.
   */
  public String id() {
    return id;
  }

  public long clusterId() {
    return clusterId;
  }

  /** The token was not above the highest seen, or came from another etcd cluster. */
  public boolean reused() {
    return reused;
  }

  /** The token is above fencing.token.max. */
  public boolean overflow() {
    return overflow;
  }

  /** The signature of (lock, token) with fencing.signing.key-file, computed once at grant; null without a key. */
  public String signature() {
    return signature;
  }

  public long grantedAtNanos() {
    return grantedAtNanos;
  }

  /** System.nanoTime() after which this grant must not be used. */
  public long deadlineNanos() {
    return deadlineNanos;
  }

  /** True while {@code nowNanos} is before the local deadline. */
  public boolean validAt(long nowNanos) {
    return nowNanos - deadlineNanos < 0;
  }

  void extendDeadline(long newDeadlineNanos) {
    if (newDeadlineNanos - deadlineNanos > 0) {
      deadlineNanos = newDeadlineNanos;
    }
  }
}
