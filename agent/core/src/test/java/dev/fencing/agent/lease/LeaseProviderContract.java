package dev.fencing.agent.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import dev.fencing.agent.lease.LeaseProvider.Acquired;
import dev.fencing.agent.lease.LeaseProvider.Holder;
import dev.fencing.agent.lease.LeaseProvider.Lease;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.HighestTokenStore;
import dev.fencing.agent.token.TokenState;
import dev.fencing.testing.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * What the {@link LeaseKeeper} relies on from every {@link LeaseProvider}, run against a real coordinator in-process:
 * one subclass per provider starts it and makes providers. Each case drives the providers as the keeper does
 * ({@code clusterId}, {@code grant}, {@code campaign}, keepalives timed from their send, {@code revoke}) and checks
 * the outcome on the coordinator through another provider, as a second JVM or the doctor would see it.
 *
 * <p>One coordinator serves every case of a class; each case has a lock of its own, and the wipe runs last.
 * Where providers legitimately differ the difference is a hook ({@link #holderReportsRemainingTtl()},
 * {@link #wipeChangesClusterId()}), so every case runs for every provider.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class LeaseProviderContract {
  /** The lease TTL of every case: short, so the cases that wait for an expiry stay fast, and above etcd's minimum. */
  static final Duration TTL = Duration.ofSeconds(3);
  /** One coordinator request (fencing.etcd.timeout). */
  static final Duration TIMEOUT = Duration.ofSeconds(5);
  /** A TTL is whole seconds, rounded down; plus the gap between the test's clock reading and the provider's. */
  private static final long ROUNDING_NANOS = TimeUnit.MILLISECONDS.toNanos(1_100);

  private final List<LeaseProvider> providers = new ArrayList<>();
  private final List<TcpProxy> proxies = new ArrayList<>();
  private int port;

  /** Starts the coordinator for this class; returns its client port on 127.0.0.1. */
  protected abstract int startCoordinator() throws Exception;

  /** Stops the coordinator and deletes its data. */
  protected abstract void stopCoordinator() throws Exception;

  /** A new provider talking to the coordinator at 127.0.0.1:{@code port}, whose leases last {@code ttl}. */
  protected abstract LeaseProvider newProvider(int port, Duration ttl) throws Exception;

  /** Deletes the lock key (node) {@code key} from outside, as an operator would. */
  protected abstract void deleteFromOutside(String key) throws Exception;

  /**
   * Replaces the coordinator's data with a brand-new store (a disaster restore onto an empty cluster) on the same
   * port: its history starts over.
   */
  protected abstract void wipeCoordinator() throws Exception;

  /**
   * Whether {@link Holder#remainingTtlSeconds} is the holder's lease's time left (etcd asks the lease). ZooKeeper
   * does not tell a session's time left to another session: it reports -1.
   */
  protected abstract boolean holderReportsRemainingTtl();

  /**
   * Whether a wiped coordinator reports another {@link LeaseProvider#clusterId} even when it replays the history of
   * the one before (etcd: a new cluster gets a new id). ZooKeeper's id is the czxid of its root path, which a fresh
   * ensemble that replays the same first requests gives the same zxid again.
   */
  protected abstract boolean wipeChangesClusterId();

  @BeforeAll
  void start() throws Exception {
    port = startCoordinator();
  }

  @AfterAll
  void stop() throws Exception {
    stopCoordinator();
  }

  @AfterEach
  void closeProviders() {
    proxies.forEach(TcpProxy::heal);
    providers.forEach(LeaseProvider::close);
    providers.clear();
    proxies.forEach(TcpProxy::close);
    proxies.clear();
  }

  @Test
  void aGrantIsALeaseOfTheTtlAskedForAndEachGrantANewLease() throws Exception {
    Candidate a = candidate();
    assertThat(a.clusterId).isNotZero();
    assertThat(a.lease.id).isNotZero();
    assertThat(a.lease.ttlSeconds).isBetween(1L, TTL.toSeconds());
    // The TTL counts from no earlier than the provider's first request to the coordinator.
    assertThat(a.grantSent + TimeUnit.SECONDS.toNanos(a.lease.ttlSeconds))
        .isGreaterThanOrEqualTo(a.firstContact + TTL.toNanos() - ROUNDING_NANOS);
    assertThat(keepAlive(a).ttlSeconds).isPositive();

    Lease second = a.provider.grant(TTL, TIMEOUT);
    Candidate b = candidate();
    assertThat(List.of(a.lease.id, second.id, b.lease.id)).doesNotHaveDuplicates();
    assertThat(b.clusterId).isEqualTo(a.clusterId);
  }

  /**
   * The keeper's deadline is the keepalive's send time (System.nanoTime) + the TTL it answers. Each answer is at
   * most the TTL, and at least the TTL counted from the send time of the previous keepalive (or of the grant): a
   * provider may be conservative about what the coordinator heard last, never more. Keepalives a little more than the
   * rounding apart therefore move the deadline forward.
   */
  @Test
  void keepAlivesMoveTheDeadlineForwardByTheTtlFromTheirSendTime() throws Exception {
    Candidate a = candidate();
    long previousSent = a.grantSent;
    List<Long> deadlines = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Thread.sleep(1_400);
      KeptAlive k = keepAlive(a);
      assertThat(k.ttlSeconds).as("keepalive %d", i).isBetween(1L, TTL.toSeconds());
      assertThat(k.deadline()).as("keepalive %d's deadline", i)
          .isGreaterThanOrEqualTo(previousSent + TTL.toNanos() - ROUNDING_NANOS)
          .isLessThanOrEqualTo(k.sent + TTL.toNanos());
      deadlines.add(k.deadline());
      previousSent = k.sent;
    }
    assertThat(deadlines.get(2)).isGreaterThan(deadlines.get(0));
  }

  /**
   * The safety of the local deadline: cut from the coordinator right after a keepalive, the holder is still seen
   * holding by everyone else until the deadline that keepalive gave; and the lock does not stay with it much longer
   * than a TTL.
   */
  @Test
  void aHolderCutOffKeepsTheLockUntilItsDeadlineAndNotMuchLonger() throws Exception {
    TcpProxy proxy = proxy();
    Candidate a = candidate(proxy.port());
    Acquired held = acquire(a, "cutoff", "holder-a").get(10, TimeUnit.SECONDS);
    KeptAlive k = keepAlive(a);
    long cut = System.nanoTime();
    proxy.partition();

    LeaseProvider observer = open(port);
    long limit = cut + TTL.toNanos() + TimeUnit.MILLISECONDS.toNanos(2_500);
    long goneAt;
    while (true) {
      Optional<Holder> h = observer.holder("cutoff", TIMEOUT);
      long answered = System.nanoTime();
      if (h.isEmpty()) {
        goneAt = answered;
        break;
      }
      assertThat(h.get().token).isEqualTo(held.token);
      if (answered - limit > 0) {
        fail("the lock is still held " + ms(answered - cut) + " ms after its holder was cut off (TTL " + TTL + ")");
      }
      Thread.sleep(50);
    }
    assertThat(goneAt).as("the lock was free %d ms before the deadline", ms(k.deadline() - goneAt))
        .isGreaterThanOrEqualTo(k.deadline());
  }

  /** Two candidates: the first holds, the second waits until it releases, then holds with a larger token. */
  @Test
  void theSecondCandidateWaitsForTheFirstAndGetsALargerToken() throws Exception {
    Candidate a = candidate();
    Candidate b = candidate();
    Acquired first = acquire(a, "order", "holder-a").get(10, TimeUnit.SECONDS);
    CompletableFuture<Acquired> second = acquire(b, "order", "holder-b");
    Thread.sleep(500);
    assertThat(second).as("the second candidate while the first holds").isNotDone();
    assertThat(open(port).holder("order", TIMEOUT).map(h -> h.holderId)).contains("holder-a");

    assertThat(a.provider.revoke(a.lease.id, TIMEOUT)).isTrue();
    Acquired next = second.get(10, TimeUnit.SECONDS);
    assertThat(next.token).isGreaterThan(first.token);
    assertThat(next.key).isNotEqualTo(first.key);
    assertThat(next.clusterId).isEqualTo(first.clusterId);
  }

  /**
   * The holder learns when its key is deleted from outside, and the lock is then the next candidate's, with a larger
   * token, though the first lease lives on. A closed watch tells nothing.
   */
  @Test
  void theHolderLearnsThatItsKeyWasDeletedAndTheNextCandidateHolds() throws Exception {
    Candidate a = candidate();
    Candidate b = candidate();
    Acquired held = acquire(a, "deleted", "holder-a").get(10, TimeUnit.SECONDS);
    CountDownLatch deleted = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    try (AutoCloseable watch = a.provider.watchDeletion(held, () -> {
      calls.incrementAndGet();
      deleted.countDown();
    })) {
      CompletableFuture<Acquired> waiting = acquire(b, "deleted", "holder-b");
      assertThat(deleted.await(300, TimeUnit.MILLISECONDS)).as("deletion reported before any").isFalse();

      deleteFromOutside(held.key);
      assertThat(deleted.await(5, TimeUnit.SECONDS)).as("deletion reported").isTrue();
      Acquired next = waiting.get(10, TimeUnit.SECONDS);
      assertThat(next.token).isGreaterThan(held.token);
      assertThat(keepAlive(a).ttlSeconds).as("the first lease outlives its key").isPositive();
      Thread.sleep(200);
      assertThat(calls).as("deletion reported once").hasValue(1);
    }

    Candidate c = candidate();
    Acquired other = acquire(c, "deleted-unwatched", "holder-c").get(10, TimeUnit.SECONDS);
    CountDownLatch unwatched = new CountDownLatch(1);
    c.provider.watchDeletion(other, unwatched::countDown).close();
    deleteFromOutside(other.key);
    assertThat(unwatched.await(500, TimeUnit.MILLISECONDS)).as("deletion reported by a closed watch").isFalse();
  }

  /**
   * After a revoke the lease is gone (a keepalive says so, a second revoke finds nothing to do) and the lock is the
   * next candidate's.
   */
  @Test
  void aRevokedLeaseIsGoneAndItsLockFree() throws Exception {
    Candidate a = candidate();
    Candidate b = candidate();
    Acquired held = acquire(a, "revoke", "holder-a").get(10, TimeUnit.SECONDS);
    CompletableFuture<Acquired> waiting = acquire(b, "revoke", "holder-b");

    assertThat(a.provider.revoke(a.lease.id, TIMEOUT)).isTrue();
    Acquired next = waiting.get(10, TimeUnit.SECONDS);
    assertThat(next.token).isGreaterThan(held.token);
    assertThat(a.provider.keepAlive(a.lease.id).get(10, TimeUnit.SECONDS)).as("keepalive of a revoked lease")
        .isLessThanOrEqualTo(0L);
    assertThat(a.provider.revoke(a.lease.id, TIMEOUT)).as("revoking it again").isTrue();
  }

  /** A third party (the doctor) reads who holds the lock, with its token and lease; nobody once it is released. */
  @Test
  void anyoneCanLookUpTheHolderItsTokenAndLease() throws Exception {
    LeaseProvider doctor = open(port);
    assertThat(doctor.holder("lookup", TIMEOUT)).isEmpty();

    Candidate a = candidate();
    Acquired held = acquire(a, "lookup", "holder-a").get(10, TimeUnit.SECONDS);
    Holder h = doctor.holder("lookup", TIMEOUT).orElseThrow();
    assertThat(h.holderId).isEqualTo("holder-a");
    assertThat(h.token).isEqualTo(held.token);
    assertThat(h.leaseId).isEqualTo(a.lease.id);
    if (holderReportsRemainingTtl()) {
      assertThat(h.remainingTtlSeconds).isBetween(1L, TTL.toSeconds());
    } else {
      assertThat(h.remainingTtlSeconds).isEqualTo(-1L);
    }

    assertThat(a.provider.revoke(a.lease.id, TIMEOUT)).isTrue();
    assertThat(doctor.holder("lookup", TIMEOUT)).isEmpty();
  }

  /**
   * A token is never issued twice for one lock: each holder's is above every earlier holder's and above the
   * coordinator's revision read before it campaigned, whether the lock was released, re-granted on the same provider,
   * or its key deleted from outside; and the revision read afterwards is at least every token issued.
   */
  @Test
  void aTokenIsNeverIssuedTwiceAcrossReleasesRegrantsAndDeletions() throws Exception {
    LeaseProvider observer = open(port);
    Candidate a = candidate();
    Candidate b = candidate();
    List<Long> tokens = new ArrayList<>();
    for (int round = 0; round < 4; round++) {
      Candidate c = round % 2 == 0 ? a : b;
      if (round >= 2) {
        c.regrant(); // a new lease on a provider that held one
      }
      long revision = observer.revision(TIMEOUT);
      Acquired held = acquire(c, "reuse", "holder-" + round).get(10, TimeUnit.SECONDS);
      assertThat(held.token).as("round %d", round).isGreaterThan(revision);
      tokens.add(held.token);
      if (round == 1) {
        deleteFromOutside(held.key);
        awaitNoHolder(observer, "reuse");
      } else {
        assertThat(c.provider.revoke(c.lease.id, TIMEOUT)).isTrue();
      }
    }
    assertThat(tokens).isSorted().doesNotHaveDuplicates();
    assertThat(observer.revision(TIMEOUT)).isGreaterThanOrEqualTo(tokens.get(tokens.size() - 1));
  }

  /**
   * A coordinator whose data was wiped starts its history over, and the token state takes its grants for reuse. Both
   * stores here replay the same history from empty, as an agent that meets a wiped coordinator first does: with a
   * cluster id that changes on a wipe the grant is reuse whatever its token; without, the reuse is caught only because
   * the replayed token is not above the one seen before.
   */
  @Test
  @Order(Integer.MAX_VALUE)
  void aGrantFromAWipedCoordinatorIsTakenForReuse() throws Exception {
    TokenState state = new TokenState("wipe", Long.MAX_VALUE, HighestTokenStore.none());
    wipeCoordinator();
    Candidate a = candidate();
    Acquired before = acquire(a, "wipe", "holder-a").get(10, TimeUnit.SECONDS);
    Grant first = state.granted(before.token, a.lease.id, before.clusterId, a.grantSent + TTL.toNanos());
    assertThat(first.reused()).isFalse();
    closeProviders();

    wipeCoordinator();
    Candidate b = candidate();
    Acquired after = acquire(b, "wipe", "holder-b").get(10, TimeUnit.SECONDS);
    if (wipeChangesClusterId()) {
      assertThat(b.clusterId).isNotEqualTo(a.clusterId);
    } else {
      assertThat(after.token).isLessThanOrEqualTo(before.token);
    }
    Grant second = state.granted(after.token, b.lease.id, after.clusterId, b.grantSent + TTL.toNanos());
    assertThat(second.reused()).isTrue();
  }

  /** A provider that has checked the coordinator and holds a lease, as the keeper has before it campaigns. */
  final class Candidate {
    final LeaseProvider provider;
    final long firstContact;
    final long clusterId;
    long grantSent;
    Lease lease;

    Candidate(LeaseProvider provider) throws Exception {
      this.provider = provider;
      this.firstContact = System.nanoTime();
      this.clusterId = provider.clusterId(TIMEOUT);
      regrant();
    }

    void regrant() throws Exception {
      grantSent = System.nanoTime();
      lease = provider.grant(TTL, TIMEOUT);
    }
  }

  /** One answered keepalive: when it was sent and the TTL it answered. */
  static final class KeptAlive {
    final long sent;
    final long ttlSeconds;

    KeptAlive(long sent, long ttlSeconds) {
      this.sent = sent;
      this.ttlSeconds = ttlSeconds;
    }

    /** The keeper's deadline from this keepalive (before its safety margin). */
    long deadline() {
      return sent + TimeUnit.SECONDS.toNanos(ttlSeconds);
    }
  }

  Candidate candidate() throws Exception {
    return candidate(port);
  }

  Candidate candidate(int coordinatorPort) throws Exception {
    return new Candidate(open(coordinatorPort));
  }

  static KeptAlive keepAlive(Candidate c) throws Exception {
    long sent = System.nanoTime();
    long ttl = c.provider.keepAlive(c.lease.id).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    return new KeptAlive(sent, ttl);
  }

  /** Campaigns for {@code lock}; the acquired lock carries the cluster id the provider reported. */
  static CompletableFuture<Acquired> acquire(Candidate c, String lock, String holderId) {
    return c.provider.campaign(lock, c.lease.id, holderId).thenApply(a -> {
      assertThat(a.clusterId).as("the acquired lock's cluster id").isEqualTo(c.clusterId);
      assertThat(a.token).isPositive();
      return a;
    });
  }

  LeaseProvider open(int coordinatorPort) throws Exception {
    LeaseProvider p = newProvider(coordinatorPort, TTL);
    providers.add(p);
    return p;
  }

  /** A proxy to the coordinator that a case can cut. */
  TcpProxy proxy() {
    TcpProxy p = new TcpProxy(port);
    proxies.add(p);
    return p;
  }

  private static void awaitNoHolder(LeaseProvider observer, String lock) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (observer.holder(lock, TIMEOUT).isPresent()) {
      if (System.nanoTime() - deadline > 0) {
        fail("lock '" + lock + "' still held 5 s after its key was deleted");
      }
      Thread.sleep(50);
    }
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
