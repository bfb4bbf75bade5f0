package dev.fencing.agent.lease;

import dev.fencing.agent.threads.AgentThreads;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LossReason;
import dev.fencing.agent.token.TokenState;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Acquires and holds the lease, forever: connect, grant a lease, campaign, keep alive, detect loss, campaign again.
 *
 * <p>Timing is ours, not the client library's: each keepalive records System.nanoTime() when it is <em>sent</em>, and
 * its acknowledgement moves the local deadline to send time + TTL - safety margin. etcd cannot expire the lease
 * before that instant (it counts the TTL from when it <em>received</em> the keepalive), so until the deadline this
 * process is the only holder whatever happens to the network; after it, it no longer claims to be. Transient
 * keepalive errors (an etcd leader change, say) are retried until the deadline.
 *
 * <p>A reused grant (etcd lost or restored data) is given up at once and the lock campaigned for again after a
 * backoff: holding it would block every side effect of this JVM and keep the lock from every other instance forever.
 * The grant has taught the token state the new cluster id, so once etcd's revision passes the highest token seen (the
 * runbook's remedy) the next grant is valid, with no restart and no revoke.
 */
public final class LeaseKeeper implements AutoCloseable {
  /** Creates the provider; called on the lease thread, never in premain. */
  public interface ProviderFactory {
    LeaseProvider create() throws Exception;
  }

  private static final AgentLog LOG = AgentLog.get(LeaseKeeper.class);
  private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
  private static final long CHECK_MILLIS = 20;
  private static final long REUSE_BACKOFF_MIN_MILLIS = 1_000;
  private static final long REUSE_BACKOFF_MAX_MILLIS = 10_000;
  private static final int MAX_LEFTOVERS = 4;

  private final TokenState state;
  private final ProviderFactory factory;
  private final String lock;
  private final String holderId;
  private final long ttlNanos;
  private final long marginNanos;
  private final Duration timeout;
  private final Duration shutdownTimeout;
  private final ScheduledExecutorService scheduler;
  private final Thread thread;
  private volatile boolean closed;
  private volatile LeaseProvider provider;
  private final ArrayDeque<Long> leftovers = new ArrayDeque<>(); // keeper thread only
  private volatile Session current;
  private String lastProblem;
  private final String coordinator; // "etcd" or "ZooKeeper", for messages

  public LeaseKeeper(AgentConfig config, TokenState state, ProviderFactory factory) {
    this(config, state.lock(), state, factory);
  }

  /** The keeper of {@code lock} (the JVM-wide lock or a section's), with its own lease and session. */
  public LeaseKeeper(AgentConfig config, String lock, TokenState state, ProviderFactory factory) {
    this.state = state;
    this.factory = factory;
    this.lock = lock;
    this.holderId = config.holderId();
    this.ttlNanos = config.leaseTtl().toNanos();
    this.marginNanos = config.leaseSafetyMargin().toNanos();
    this.timeout = config.etcdTimeout();
    this.shutdownTimeout = config.shutdownTimeout();
    this.scheduler = Executors.newSingleThreadScheduledExecutor(AgentThreads.factory("fencing-agent-keepalive-" + lock));
    this.thread = AgentThreads.newThread(this::run, "fencing-agent-lease-" + lock);
    this.coordinator = LeaseProviders.name(config);
  }

  public void start() {
    thread.start();
  }

  private void run() {
    // Retries after etcd errors back off to half the TTL (0.5-5 s): a lock with a short TTL is meant to change hands
    // fast, also after an etcd outage.
    long errorBackoffMaxMs = Math.max(500, Math.min(5000, TimeUnit.NANOSECONDS.toMillis(ttlNanos) / 2));
    long backoffMs = 500;
    long reuseBackoffMs = REUSE_BACKOFF_MIN_MILLIS;
    while (!closed) {
      try {
        if (provider == null) {
          provider = factory.create();
        }
        long clusterId = provider.clusterId(timeout);
        revokeLeftovers(provider);
        state.standby("campaigning for lock '" + lock + "' as " + holderId);
        lastProblem = null;
        Grant held = holdOneLease(provider, clusterId, reuseBackoffMs);
        backoffMs = 500;
        if (held != null && held.reused()) {
          Thread.sleep(reuseBackoffMs + (long) (Math.random() * 250));
          reuseBackoffMs = Math.min(reuseBackoffMs * 2, REUSE_BACKOFF_MAX_MILLIS);
        } else if (held != null) {
          reuseBackoffMs = REUSE_BACKOFF_MIN_MILLIS;
        }
      } catch (InterruptedException e) {
        return;
      } catch (Throwable t) {
        if (closed) {
          return;
        }
        String problem = coordinator + " error: " + AgentLog.describe(t);
        state.unreachable(coordinator + " unreachable or failing (" + AgentLog.describe(t) + ")");
        if (!problem.equals(lastProblem)) {
          LOG.warn("lock '" + lock + "': " + problem + "; retrying");
          lastProblem = problem;
        }
        reconnect();
        try {
          Thread.sleep(backoffMs + (long) (Math.random() * 100));
        } catch (InterruptedException e) {
          return;
        }
        backoffMs = Math.min(backoffMs * 2, errorBackoffMaxMs);
      }
    }
  }

  /** Remembers a lease whose revoke did not reach the coordinator (a few at most; older ones lapse by their TTL). */
  private void leftover(long leaseId) {
    if (leftovers.size() == MAX_LEFTOVERS) {
      leftovers.removeFirst();
    }
    leftovers.addLast(leaseId);
  }

  /**
   * Revokes the leases whose revoke failed, now that the coordinator answered. Such a lease holds its key, which
   * keeps the lock from every candidate until its TTL runs out; an etcd restart gives it the whole TTL again. This
   * JVM gave them up already (each ended locally), so revoking them only lets the next holder in sooner.
   */
  private void revokeLeftovers(LeaseProvider p) {
    while (!leftovers.isEmpty() && p.revoke(leftovers.peekFirst(), timeout)) {
      leftovers.removeFirst();
    }
  }

  /**
   * Lets the provider's transport try to connect during the backoff below, so that the next try reaches a
   * coordinator that came back (etcd's gRPC channel would otherwise wait out its own, longer backoff). Never throws:
   * this runs on the error path.
   */
  private void reconnect() {
    LeaseProvider p = provider;
    if (p == null) {
      return;
    }
    try {
      p.reconnect();
    } catch (RuntimeException | LinkageError e) {
      LOG.debug("lock '" + lock + "': reconnect failed: " + AgentLog.describe(e));
    }
  }

  /**
   * Grants a lease, campaigns, and holds the lock until the lease ends. Returns the grant held (null if the lease
   * ended while campaigning); a reused grant is given up at once ({@code reuseBackoffMs} is only reported).
   */
  private Grant holdOneLease(LeaseProvider p, long clusterId, long reuseBackoffMs) throws Exception {
    long sent = state.now();
    LeaseProvider.Lease lease = p.grant(Duration.ofNanos(ttlNanos), timeout);
    Session s = new Session(p, lease.id, sent + TimeUnit.SECONDS.toNanos(lease.ttlSeconds) - marginNanos);
    current = s;
    // A third of the TTL granted, when it is below the one asked for (a ZooKeeper server bounds the session timeout).
    long interval = Math.max(Math.min(TimeUnit.NANOSECONDS.toMillis(ttlNanos), TimeUnit.SECONDS.toMillis(lease.ttlSeconds)) / 3, 100);
    ScheduledFuture<?> keepalive = scheduler.scheduleWithFixedDelay(s::sendKeepAlive, interval, interval, TimeUnit.MILLISECONDS);
    ScheduledFuture<?> check = scheduler.scheduleWithFixedDelay(s::checkDeadline, CHECK_MILLIS, CHECK_MILLIS, TimeUnit.MILLISECONDS);
    AutoCloseable watch = null;
    Grant g = null;
    try {
      CompletableFuture<LeaseProvider.Acquired> campaign = p.campaign(lock, lease.id, holderId);
      CompletableFuture.anyOf(campaign, s.ended).get();
      if (s.ended.isDone()) {
        campaign.cancel(true);
        LOG.debug("lease " + Long.toHexString(lease.id) + " ended while campaigning: " + s.ended.getNow(null));
        return null;
      }
      LeaseProvider.Acquired acquired = campaign.get();
      g = s.attach(acquired);
      if (g.reused()) {
        String why = "token " + g.token() + " was reused: lock given up, campaigning again in about "
            + reuseBackoffMs + " ms";
        state.released(g, why);
        LOG.warn("lock '" + lock + "': " + why);
        return g; // the finally block revokes the lease, deleting the lock key for the next candidate
      }
      LOG.info("holding lock '" + lock + "' with fencing token " + acquired.token + " (lease "
          + Long.toHexString(lease.id) + ", " + coordinator + " cluster " + Long.toHexString(acquired.clusterId) + ")");
      watch = p.watchDeletion(acquired, () -> s.end(LossReason.KEY_DELETED));
      LossReason reason = s.ended.get();
      if (reason != null) {
        state.lost(g, reason);
      }
      return g;
    } finally {
      if (g != null) {
        // Held, then an error before the lease could be watched (or this thread was interrupted): the lease is
        // revoked below, so this JVM must stop claiming the lock now, not when someone notices. A no-op when the
        // grant already ended (lost, released): lost() only acts on the grant still held.
        state.lost(g, LossReason.LEASE_REVOKED);
      }
      keepalive.cancel(false);
      check.cancel(false);
      s.end(null);
      if (watch != null) {
        try {
          watch.close();
        } catch (Exception ignored) {
          // closing a watch on a broken connection may fail; nothing to do
        }
      }
      if (!closed && !p.revoke(lease.id, Duration.ofSeconds(1))) {
        // Delete our key now rather than wait out the TTL; when etcd is unreachable, once it answers again.
        leftover(lease.id);
      }
    }
  }

  /** One lease, from grant to loss. */
  private final class Session {
    final LeaseProvider provider;
    final long leaseId;
    final CompletableFuture<LossReason> ended = new CompletableFuture<>();
    private long deadline;
    private Grant grant;
    private volatile Throwable lastKeepAliveError;

    Session(LeaseProvider provider, long leaseId, long deadline) {
      this.provider = provider;
      this.leaseId = leaseId;
      this.deadline = deadline;
    }

    synchronized Grant attach(LeaseProvider.Acquired a) {
      grant = state.granted(a.token, leaseId, a.clusterId, deadline);
      return grant;
    }

    void sendKeepAlive() {
      if (ended.isDone()) {
        return;
      }
      long sent = state.now();
      provider.keepAlive(leaseId).whenComplete((ttl, error) -> {
        if (error != null) {
          lastKeepAliveError = error;
          LOG.debug("keepalive of lease " + Long.toHexString(leaseId) + " failed: " + AgentLog.describe(error));
          if (!ended.isDone()) {
            scheduler.schedule(this::sendKeepAlive, RETRY_NANOS, TimeUnit.NANOSECONDS);
          }
        } else if (ttl <= 0) {
          end(LossReason.LEASE_REVOKED);
        } else {
          lastKeepAliveError = null;
          renew(sent + TimeUnit.SECONDS.toNanos(ttl) - marginNanos);
        }
      });
    }

    private synchronized void renew(long newDeadline) {
      long now = state.now();
      if (ended.isDone() || now - deadline >= 0) {
        return; // an expired lease never comes back: the deadline check ends this session
      }
      if (newDeadline - deadline > 0) {
        deadline = newDeadline;
        if (grant != null) {
          state.renewed(grant, deadline);
        }
      }
    }

    void checkDeadline() {
      long d;
      synchronized (this) {
        d = deadline;
      }
      if (state.now() - d >= 0) {
        end(lastKeepAliveError != null ? LossReason.KEEPALIVE_FAILED : LossReason.DEADLINE_PASSED);
      }
    }

    void end(LossReason reason) {
      if (reason == LossReason.KEY_DELETED || reason == LossReason.LEASE_REVOKED) {
        synchronized (this) {
          if (state.now() - deadline >= 0) {
            // etcd's news arrived after our own deadline (a paused process waking up to the deletion of its key):
            // the lease had already expired locally, and that is the loss to report.
            reason = lastKeepAliveError != null ? LossReason.KEEPALIVE_FAILED : LossReason.DEADLINE_PASSED;
          }
        }
      }
      ended.complete(reason);
    }
  }

  /** Releases the lease (bounded by fencing.shutdown.timeout) and stops. Called at JVM shutdown. */
  @Override
  public void close() {
    close("lease released at shutdown");
  }

  /** As {@link #close()}, {@code why} told as the grant's end (a ShedLock task's lock: the task ended). */
  public void close(String why) {
    closed = true;
    Session s = current;
    LeaseProvider p = provider;
    if (s != null) {
      synchronized (s) {
        if (s.grant != null) {
          state.released(s.grant, why);
        }
      }
      s.end(null);
      if (p != null) {
        p.revoke(s.leaseId, shutdownTimeout);
      }
    }
    thread.interrupt();
    scheduler.shutdownNow();
    if (p != null) {
      p.close();
    }
  }
}
