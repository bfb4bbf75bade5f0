package dev.fencing.agent.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.token.HighestTokenStore;
import dev.fencing.agent.token.LeasePhase;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenView;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** The keeper's reaction to what the coordinator grants, on a scripted provider (pure logic; etcd in the ITs). */
class LeaseKeeperTest {

  @Test
  void aReusedGrantIsGivenUpAndTheNextValidGrantIsHeld() throws Exception {
    ScriptedProvider etcd = new ScriptedProvider();
    etcd.grants.add(new LeaseProvider.Acquired(10, 1, "k1"));
    etcd.grants.add(new LeaseProvider.Acquired(3, 2, "k2"));   // etcd wiped: a new cluster, revisions from 1
    etcd.grants.add(new LeaseProvider.Acquired(12, 2, "k3"));  // revision bumped above every token issued
    TokenState state = new TokenState("l", Long.MAX_VALUE, HighestTokenStore.none());
    try (LeaseKeeper keeper = new LeaseKeeper(ConfigLoader.load("lock=l,lease.ttl=3s", new Properties(), Map.of()),
        state, () -> etcd)) {
      keeper.start();
      await(state, v -> v.storedPhase() == LeasePhase.HOLDING && v.grant().token() == 10);

      etcd.deleteKey(); // the wipe takes the lock key with it
      TokenView reused = await(state, v -> v.grant() != null && v.grant().token() == 3
          && v.storedPhase() == LeasePhase.LOST && etcd.revoked.contains(2L)); // lease 2 went, key and all
      assertThat(reused.grant().reused()).isTrue();
      assertThat(reused.detail()).contains("token 3 was reused: lock given up");

      TokenView healed = await(state, v -> v.storedPhase() == LeasePhase.HOLDING && v.grant().token() == 12);
      assertThat(healed.grant().reused()).isFalse();
      assertThat(state.reuseCount()).isEqualTo(1);
    }
  }

  @Test
  void anErrorAfterTheLockIsAcquiredEndsHoldingBeforeTheLeaseIsRevoked() throws Exception {
    ScriptedProvider etcd = new ScriptedProvider();
    etcd.grants.add(new LeaseProvider.Acquired(10, 1, "k1"));
    etcd.grants.add(new LeaseProvider.Acquired(11, 1, "k2"));
    etcd.watchFailures.set(1); // the first watch cannot be set up
    TokenState state = new TokenState("l", Long.MAX_VALUE, HighestTokenStore.none());
    List<String> seen = new CopyOnWriteArrayList<>();
    etcd.onRevoke = id -> seen.add(id + ":" + state.view().storedPhase());
    try (LeaseKeeper keeper = new LeaseKeeper(ConfigLoader.load("lock=l,lease.ttl=3s", new Properties(), Map.of()),
        state, () -> etcd)) {
      keeper.start();
      TokenView held = await(state, v -> v.storedPhase() == LeasePhase.HOLDING && v.grant().token() == 11);
      // lease 1's key was acquired, its watch failed: the lease was revoked while this JVM no longer claimed it
      assertThat(seen).contains("1:LOST");
      assertThat(held.lastLoss()).isEqualTo(dev.fencing.agent.token.LossReason.LEASE_REVOKED);
      assertThat(state.losses(dev.fencing.agent.token.LossReason.LEASE_REVOKED)).isEqualTo(1);
    }
  }

  /**
   * A lease whose revoke could not reach etcd lives on there until its TTL runs out, and an etcd restart gives it the
   * whole TTL again: its key would keep the lock from every candidate, this JVM's next campaign included. The keeper
   * revokes it once etcd answers again, before it asks for the next lease.
   */
  @Test
  void aLeaseWhoseRevokeFailedIsRevokedOnceTheCoordinatorAnswersAgain() throws Exception {
    ScriptedProvider etcd = new ScriptedProvider();
    etcd.grants.add(new LeaseProvider.Acquired(10, 1, "k1"));
    etcd.grants.add(new LeaseProvider.Acquired(11, 1, "k2"));
    etcd.revokeFailures.set(1); // etcd unreachable when lease 1 ends
    TokenState state = new TokenState("l", Long.MAX_VALUE, HighestTokenStore.none());
    try (LeaseKeeper keeper = new LeaseKeeper(ConfigLoader.load("lock=l,lease.ttl=3s", new Properties(), Map.of()),
        state, () -> etcd)) {
      keeper.start();
      await(state, v -> v.storedPhase() == LeasePhase.HOLDING && v.grant().token() == 10);
      etcd.deleteKey();
      await(state, v -> v.storedPhase() == LeasePhase.HOLDING && v.grant().token() == 11);
      assertThat(etcd.events).containsSubsequence("grant 1", "revoke 1 failed", "revoke 1", "grant 2");
    }
  }

  @Test
  void theLeaseCyclesRequestsAreTimedByOperation() throws Exception {
    ScriptedProvider etcd = new ScriptedProvider();
    etcd.grants.add(new LeaseProvider.Acquired(10, 1, "k1"));
    TokenState state = new TokenState("l", Long.MAX_VALUE, HighestTokenStore.none());
    dev.fencing.agent.metrics.CoordinatorLatency latency = new dev.fencing.agent.metrics.CoordinatorLatency("l");
    try (LeaseKeeper keeper = new LeaseKeeper(ConfigLoader.load("lock=l,lease.ttl=2s", new Properties(), Map.of()),
        state, () -> new TimedLeaseProvider(etcd, latency))) {
      keeper.start();
      await(state, v -> v.storedPhase() == LeasePhase.HOLDING);
      long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (latency.count(dev.fencing.agent.metrics.CoordinatorLatency.Op.KEEPALIVE) == 0 && System.nanoTime() < end) {
        Thread.sleep(20); // keepalives go out every third of the TTL
      }
    }
    assertThat(latency.count(dev.fencing.agent.metrics.CoordinatorLatency.Op.GRANT)).isEqualTo(1);
    assertThat(latency.count(dev.fencing.agent.metrics.CoordinatorLatency.Op.CAMPAIGN)).isEqualTo(1);
    assertThat(latency.count(dev.fencing.agent.metrics.CoordinatorLatency.Op.KEEPALIVE)).isPositive();
    // the scripted coordinator answers at once: everything in the first bucket (5 ms)
    assertThat(latency.counts(dev.fencing.agent.metrics.CoordinatorLatency.Op.GRANT)[0]).isEqualTo(1);
  }

  private static TokenView await(TokenState state, Predicate<TokenView> p) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < end) {
      TokenView v = state.view();
      if (p.test(v)) {
        return v;
      }
      Thread.sleep(10);
    }
    throw new AssertionError("state never matched; last: " + state.view().storedPhase() + " "
        + state.view().detail());
  }

  /** Grants every lease, answers every keepalive, and acquires the lock with the scripted tokens in order. */
  private static final class ScriptedProvider implements LeaseProvider {
    final Queue<Acquired> grants = new ArrayDeque<>();
    final List<Long> revoked = new CopyOnWriteArrayList<>();
    final java.util.concurrent.atomic.AtomicInteger watchFailures = new java.util.concurrent.atomic.AtomicInteger();
    volatile java.util.function.LongConsumer onRevoke = id -> { };
    final java.util.concurrent.atomic.AtomicInteger revokeFailures = new java.util.concurrent.atomic.AtomicInteger();
    final List<String> events = new CopyOnWriteArrayList<>();
    private final AtomicLong leases = new AtomicLong();
    private volatile Runnable onDeleted;

    void deleteKey() throws InterruptedException {
      while (onDeleted == null) {
        Thread.sleep(5); // the keeper watches the key right after it reports the grant
      }
      onDeleted.run();
    }

    @Override
    public long clusterId(Duration timeout) {
      return 1;
    }

    @Override
    public Lease grant(Duration ttl, Duration timeout) {
      long id = leases.incrementAndGet();
      events.add("grant " + id);
      return new Lease(id, ttl.toSeconds());
    }

    @Override
    public CompletableFuture<Long> keepAlive(long leaseId) {
      return CompletableFuture.completedFuture(3L);
    }

    @Override
    public synchronized CompletableFuture<Acquired> campaign(String lock, long leaseId, String holderId) {
      Acquired next = grants.poll();
      return next == null ? new CompletableFuture<>() : CompletableFuture.completedFuture(next);
    }

    @Override
    public AutoCloseable watchDeletion(Acquired acquired, Runnable onDeleted) {
      if (watchFailures.getAndDecrement() > 0) {
        throw new IllegalStateException("watch stream closed");
      }
      this.onDeleted = onDeleted;
      return () -> { };
    }

    @Override
    public boolean revoke(long leaseId, Duration timeout) {
      onRevoke.accept(leaseId);
      if (revokeFailures.getAndDecrement() > 0) {
        events.add("revoke " + leaseId + " failed");
        return false;
      }
      revoked.add(leaseId);
      events.add("revoke " + leaseId);
      return true;
    }

    @Override
    public long revision(Duration timeout) {
      return 0;
    }

    @Override
    public Optional<Holder> holder(String lock, Duration timeout) {
      return Optional.empty();
    }

    @Override
    public void close() {}
  }
}
