package dev.fencing.agent.lease;

import dev.fencing.agent.metrics.CoordinatorLatency;
import dev.fencing.agent.metrics.CoordinatorLatency.Op;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Times the requests of the lease cycle (grant, keepalive, campaign) of any provider into
 * {@link CoordinatorLatency}; everything else passes straight through. Failed requests are timed too: a slow failure
 * is what an operator looks for.
 */
public final class TimedLeaseProvider implements LeaseProvider {
  private final LeaseProvider delegate;
  private final CoordinatorLatency latency;

  public TimedLeaseProvider(LeaseProvider delegate, CoordinatorLatency latency) {
    this.delegate = delegate;
    this.latency = latency;
  }

  @Override
  public long clusterId(Duration timeout) throws Exception {
    return delegate.clusterId(timeout);
  }

  @Override
  public Lease grant(Duration ttl, Duration timeout) throws Exception {
    long start = System.nanoTime();
    try {
      return delegate.grant(ttl, timeout);
    } finally {
      latency.record(Op.GRANT, System.nanoTime() - start);
    }
  }

  @Override
  public CompletableFuture<Long> keepAlive(long leaseId) {
    return timed(Op.KEEPALIVE, System.nanoTime(), delegate.keepAlive(leaseId));
  }

  @Override
  public CompletableFuture<Acquired> campaign(String lock, long leaseId, String holderId) {
    return timed(Op.CAMPAIGN, System.nanoTime(), delegate.campaign(lock, leaseId, holderId));
  }

  /** Records when {@code f} completes; returns {@code f} itself, so cancelling it still reaches the provider. */
  private <T> CompletableFuture<T> timed(Op op, long start, CompletableFuture<T> f) {
    f.whenComplete((v, e) -> latency.record(op, System.nanoTime() - start));
    return f;
  }

  @Override
  public AutoCloseable watchDeletion(Acquired acquired, Runnable onDeleted) {
    return delegate.watchDeletion(acquired, onDeleted);
  }

  @Override
  public boolean revoke(long leaseId, Duration timeout) {
    return delegate.revoke(leaseId, timeout);
  }

  @Override
  public long revision(Duration timeout) throws Exception {
    return delegate.revision(timeout);
  }

  @Override
  public Optional<Holder> holder(String lock, Duration timeout) throws Exception {
    return delegate.holder(lock, timeout);
  }

  @Override
  public void reconnect() {
    delegate.reconnect();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
