package dev.fencing.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class TokenStateTest {
  private static final String LOCK = "ledger";
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private static final long CLUSTER = 0xC1;

  private final AtomicLong clock = new AtomicLong(1_000 * SECOND);
  private final TokenState state = stateWith(HighestTokenStore.none(), Long.MAX_VALUE);

  @TempDir Path dir;

  // ---- helpers ----

  private TokenState stateWith(HighestTokenStore store, long tokenMax) {
    return new TokenState(LOCK, tokenMax, store, clock::get);
  }

  /** A grant of {@code token} on the default cluster whose deadline is ten seconds from now. */
  private Grant grant(TokenState s, long token) {
    return s.granted(token, 7, CLUSTER, clock.get() + 10 * SECOND);
  }

  private Grant grant(long token) {
    return grant(state, token);
  }

  private long totalLosses() {
    return Arrays.stream(LossReason.values()).mapToLong(state::losses).sum();
  }

  // ---- initial, standby, failed ----

  @Test
  void startsInStartingWithoutGrant() {
    assertThat(state.phase()).isEqualTo(LeasePhase.STARTING);
    assertThat(state.view().grant()).isNull();
    assertThat(state.view().lastLoss()).isNull();
    assertThat(state.acquisitions()).isZero();
    assertThat(state.lock()).isEqualTo(LOCK);
  }

  @Test
  void standbyMovesStartingToStandbyWithDetail() {
    state.standby("campaigning");

    assertThat(state.phase()).isEqualTo(LeasePhase.STANDBY);
    assertThat(state.view().detail()).isEqualTo("campaigning");
  }

  @Test
  void failedFromStarting() {
    state.failed("no etcd");

    assertThat(state.phase()).isEqualTo(LeasePhase.FAILED);
    assertThat(state.view().detail()).isEqualTo("no etcd");
  }

  @Test
  void failedFromStandby() {
    state.standby("campaigning");
    state.failed("no etcd");

    assertThat(state.phase()).isEqualTo(LeasePhase.FAILED);
  }

  @Test
  void etcdUnreachableBeforeItWasEverReachedIsAFailure() {
    state.unreachable("etcd unreachable");

    assertThat(state.phase()).isEqualTo(LeasePhase.FAILED);
  }

  @Test
  void etcdUnreachableKeepsAStandbyOnStandby() {
    // fail-mode=open lets a FAILED agent's side effects pass untagged: a standby must not become one on an etcd blip
    state.standby("campaigning");
    state.unreachable("etcd unreachable");

    assertThat(state.phase()).isEqualTo(LeasePhase.STANDBY);
    assertThat(state.view().detail()).isEqualTo("etcd unreachable; still campaigning");
  }

  @Test
  void etcdUnreachableNeverReplacesAHeldOrLostGrant() {
    Grant g = grant(5);
    state.unreachable("etcd unreachable");
    assertThat(state.phase()).isEqualTo(LeasePhase.HOLDING);

    state.lost(g, LossReason.KEY_DELETED);
    state.unreachable("etcd unreachable");
    assertThat(state.phase()).isEqualTo(LeasePhase.LOST);
  }

  @Test
  void standbyRecoversFromFailed() {
    state.failed("no etcd");
    state.standby("campaigning");

    assertThat(state.phase()).isEqualTo(LeasePhase.STANDBY);
  }

  @Test
  void failedNeverReplacesAHeldGrant() {
    Grant g = grant(5);

    state.failed("etcd unreachable");

    assertThat(state.phase()).isEqualTo(LeasePhase.HOLDING);
    assertThat(state.view().grant()).isSameAs(g);
  }

  @Test
  void failedAndStandbyNeverReplaceALostGrant() {
    Grant g = grant(5);
    state.lost(g, LossReason.KEY_DELETED);

    state.failed("etcd unreachable");
    state.standby("campaigning");

    assertThat(state.phase()).isEqualTo(LeasePhase.LOST);
    assertThat(state.view().grant()).isSameAs(g);
  }

  // ---- granted ----

  @Test
  void grantedHoldsTheToken() {
    Grant g = state.granted(42, 7, CLUSTER, clock.get() + 10 * SECOND);

    assertThat(state.phase()).isEqualTo(LeasePhase.HOLDING);
    assertThat(state.view().grant()).isSameAs(g);
    assertThat(g.token()).isEqualTo(42);
    assertThat(g.lock()).isEqualTo(LOCK);
    assertThat(g.leaseId()).isEqualTo(7);
    assertThat(g.clusterId()).isEqualTo(CLUSTER);
    assertThat(g.grantedAtNanos()).isEqualTo(clock.get());
    assertThat(g.reused()).isFalse();
    assertThat(g.overflow()).isFalse();
    assertThat(state.acquisitions()).isEqualTo(1);
    assertThat(state.highestSeen()).isEqualTo(42);
  }

  // ---- the local deadline ----

  @Test
  void phaseTurnsExpiredExactlyAtTheDeadlineWithoutAnyWriter() {
    Grant g = grant(5);
    clock.set(g.deadlineNanos() - 1);
    assertThat(state.phase()).isEqualTo(LeasePhase.HOLDING);

    clock.set(g.deadlineNanos());

    assertThat(state.phase()).isEqualTo(LeasePhase.EXPIRED);
    assertThat(state.view().storedPhase()).isEqualTo(LeasePhase.HOLDING);
  }

  @Test
  void renewedMovesTheDeadlineForward() {
    Grant g = grant(5);
    long later = g.deadlineNanos() + 5 * SECOND;

    state.renewed(g, later);

    assertThat(g.deadlineNanos()).isEqualTo(later);
    clock.set(later - 1);
    assertThat(state.phase()).isEqualTo(LeasePhase.HOLDING);
  }

  @Test
  void renewedNeverMovesTheDeadlineBack() {
    Grant g = grant(5);
    long deadline = g.deadlineNanos();

    state.renewed(g, deadline - SECOND);

    assertThat(g.deadlineNanos()).isEqualTo(deadline);
  }

  @Test
  void renewedAfterTheDeadlinePassedDoesNotReviveTheGrant() {
    Grant g = grant(5);
    long deadline = g.deadlineNanos();
    clock.set(deadline);

    state.renewed(g, deadline + 10 * SECOND);

    assertThat(g.deadlineNanos()).isEqualTo(deadline);
    assertThat(state.phase()).isEqualTo(LeasePhase.EXPIRED);
  }

  @Test
  void renewedAfterAnExpiryLossDoesNotReviveTheGrant() {
    Grant g = grant(5);
    state.lost(g, LossReason.KEEPALIVE_FAILED);

    state.renewed(g, clock.get() + 10 * SECOND);

    assertThat(state.phase()).isEqualTo(LeasePhase.EXPIRED);
  }

  @Test
  void renewedForAStaleGrantIsIgnored() {
    Grant old = grant(5);
    long oldDeadline = old.deadlineNanos();
    state.lost(old, LossReason.LEASE_REVOKED);
    Grant current = grant(6);
    long currentDeadline = current.deadlineNanos();

    state.renewed(old, oldDeadline + 60 * SECOND);

    assertThat(old.deadlineNanos()).isEqualTo(oldDeadline);
    assertThat(current.deadlineNanos()).isEqualTo(currentDeadline);
    assertThat(state.view().grant()).isSameAs(current);
  }

  // ---- losses ----

  @ParameterizedTest
  @EnumSource(value = LossReason.class, names = {"DEADLINE_PASSED", "KEEPALIVE_FAILED"})
  void localLossReasonsMakeTheGrantExpired(LossReason reason) {
    Grant g = grant(5);

    assertThat(state.lost(g, reason)).isTrue();

    assertThat(state.phase()).isEqualTo(LeasePhase.EXPIRED);
    assertThat(state.view().grant()).isSameAs(g);
    assertThat(state.view().lastLoss()).isEqualTo(reason);
    assertThat(state.losses(reason)).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(value = LossReason.class, names = {"LEASE_REVOKED", "KEY_DELETED"})
  void etcdLossReasonsMakeTheGrantLost(LossReason reason) {
    Grant g = grant(5);

    assertThat(state.lost(g, reason)).isTrue();

    assertThat(state.phase()).isEqualTo(LeasePhase.LOST);
    assertThat(state.view().lastLoss()).isEqualTo(reason);
    assertThat(state.losses(reason)).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(LossReason.class)
  void aLossIsCountedOncePerGrant(LossReason reason) {
    Grant g = grant(5);
    state.lost(g, reason);

    assertThat(state.lost(g, reason)).isFalse();
    for (LossReason other : LossReason.values()) {
      assertThat(state.lost(g, other)).isFalse();
    }

    assertThat(state.losses(reason)).isEqualTo(1);
    assertThat(totalLosses()).isEqualTo(1);
  }

  @Test
  void lostWithAStaleGrantIsIgnored() {
    Grant old = grant(5);
    state.lost(old, LossReason.KEY_DELETED);
    Grant current = grant(6);

    assertThat(state.lost(old, LossReason.LEASE_REVOKED)).isFalse();

    assertThat(state.phase()).isEqualTo(LeasePhase.HOLDING);
    assertThat(state.view().grant()).isSameAs(current);
    assertThat(state.losses(LossReason.LEASE_REVOKED)).isZero();
  }

  @Test
  void lostBeforeAnyGrantIsIgnored() {
    Grant g = grant(stateWith(HighestTokenStore.none(), Long.MAX_VALUE), 5);

    assertThat(state.lost(g, LossReason.KEY_DELETED)).isFalse();

    assertThat(state.phase()).isEqualTo(LeasePhase.STARTING);
    assertThat(totalLosses()).isZero();
  }

  @Test
  void aNewGrantAfterALossHoldsAgain() {
    Grant first = grant(5);
    state.lost(first, LossReason.KEY_DELETED);

    Grant second = grant(6);

    assertThat(state.phase()).isEqualTo(LeasePhase.HOLDING);
    assertThat(state.view().grant()).isSameAs(second);
    assertThat(state.view().lastLoss()).isEqualTo(LossReason.KEY_DELETED);
    assertThat(state.acquisitions()).isEqualTo(2);
    assertThat(second.reused()).isFalse();
  }

  @Test
  void releasedIsLostWithoutCountingALoss() {
    Grant g = grant(5);

    state.released(g, "lease released at shutdown");

    assertThat(state.phase()).isEqualTo(LeasePhase.LOST);
    assertThat(state.view().grant()).isSameAs(g);
    assertThat(state.view().detail()).isEqualTo("lease released at shutdown");
    assertThat(state.view().lastLoss()).isNull();
    assertThat(totalLosses()).isZero();
  }

  @Test
  void releasedWithAStaleGrantIsIgnored() {
    Grant old = grant(5);
    state.lost(old, LossReason.KEY_DELETED);
    grant(6);

    state.released(old, "lease released at shutdown");

    assertThat(state.phase()).isEqualTo(LeasePhase.HOLDING);
  }

  // ---- the guard: reuse and overflow ----

  @Test
  void sameTokenAgainIsReuse() {
    grant(10);

    Grant again = grant(10);

    assertThat(again.reused()).isTrue();
    assertThat(state.reuseCount()).isEqualTo(1);
  }

  @Test
  void lowerTokenIsReuse() {
    grant(10);

    Grant lower = grant(9);

    assertThat(lower.reused()).isTrue();
    assertThat(state.reuseCount()).isEqualTo(1);
    assertThat(state.highestSeen()).isEqualTo(10);
  }

  @Test
  void tokenFromAnotherEtcdClusterIsReuseEvenWhenHigher() {
    grant(10);

    Grant other = state.granted(20, 7, 0xC2, clock.get() + 10 * SECOND);

    assertThat(other.reused()).isTrue();
    assertThat(state.reuseCount()).isEqualTo(1);
  }

  @Test
  void laterHigherTokenIsNotReuse() {
    grant(10);
    grant(9);

    Grant higher = grant(11);

    assertThat(higher.reused()).isFalse();
    assertThat(state.reuseCount()).isEqualTo(1);
  }

  @Test
  void tokenAboveTokenMaxIsOverflow() {
    TokenState small = stateWith(HighestTokenStore.none(), 100);

    Grant atMax = grant(small, 100);
    Grant above = grant(small, 101);

    assertThat(atMax.overflow()).isFalse();
    assertThat(above.overflow()).isTrue();
    assertThat(above.reused()).isFalse();
    assertThat(small.overflowCount()).isEqualTo(1);
    assertThat(small.tokenMax()).isEqualTo(100);
  }

  // ---- persistence of the highest token seen ----

  @Test
  void persistedTokenFileIsWrittenInTheStateDir() {
    grant(stateWith(HighestTokenStore.in(dir, LOCK), Long.MAX_VALUE), 42);

    assertThat(dir.resolve(LOCK + ".token")).exists();
  }

  @Test
  void restartedStateKnowsTheHighestTokenSeen() {
    HighestTokenStore store = storeThatSaw(42);

    TokenState restarted = stateWith(store, Long.MAX_VALUE);
    restarted.loadPersisted();

    assertThat(restarted.highestSeen()).isEqualTo(42);
  }

  @Test
  void equalTokenAfterARestartIsReuse() {
    assertThat(grantAfterRestart(storeThatSaw(42), 42, CLUSTER).reused()).isTrue();
  }

  @Test
  void lowerTokenAfterARestartIsReuse() {
    assertThat(grantAfterRestart(storeThatSaw(42), 41, CLUSTER).reused()).isTrue();
  }

  @Test
  void otherClusterAfterARestartIsReuse() {
    assertThat(grantAfterRestart(storeThatSaw(42), 43, 0xC2).reused()).isTrue();
  }

  @Test
  void higherTokenAfterARestartIsNotReuse() {
    assertThat(grantAfterRestart(storeThatSaw(42), 43, CLUSTER).reused()).isFalse();
  }

  /** A store in a fresh directory of {@link #dir} that a previous run left holding {@code token} on the default cluster. */
  private HighestTokenStore storeThatSaw(long token) {
    HighestTokenStore store = HighestTokenStore.in(dir.resolve("run-" + token), LOCK);
    grant(stateWith(store, Long.MAX_VALUE), token);
    return store;
  }

  private Grant grantAfterRestart(HighestTokenStore store, long token, long clusterId) {
    TokenState restarted = stateWith(store, Long.MAX_VALUE);
    restarted.loadPersisted();
    return restarted.granted(token, 7, clusterId, clock.get() + 10 * SECOND);
  }

  @Test
  void corruptPersistedFileIsTolerated() throws IOException {
    Files.writeString(dir.resolve(LOCK + ".token"), "highestToken=banana\nclusterId=zz\n");
    TokenState restarted = stateWith(HighestTokenStore.in(dir, LOCK), Long.MAX_VALUE);

    assertThatNoException().isThrownBy(restarted::loadPersisted);

    assertThat(restarted.highestSeen()).isZero();
    assertThat(grant(restarted, 1).reused()).isFalse();
  }

  @Test
  void withoutStateDirNothingIsPersisted() {
    TokenState s = stateWith(HighestTokenStore.in(null, LOCK), Long.MAX_VALUE);
    grant(s, 42);

    TokenState restarted = stateWith(HighestTokenStore.in(null, LOCK), Long.MAX_VALUE);
    restarted.loadPersisted();

    assertThat(grant(restarted, 1).reused()).isFalse();
  }

  // ---- waiting for the lease (real clock) ----

  @Test
  void awaitHoldingReturnsTrueWhenAGrantArrivesFromAnotherThread() throws Exception {
    TokenState real = new TokenState(LOCK, Long.MAX_VALUE, HighestTokenStore.none());
    Thread granter = new Thread(() -> {
      sleepMillis(50);
      real.granted(5, 7, CLUSTER, System.nanoTime() + 10 * SECOND);
    });
    granter.start();

    boolean holding = real.awaitHolding(TimeUnit.SECONDS.toNanos(5));

    granter.join();
    assertThat(holding).isTrue();
    assertThat(real.phase()).isEqualTo(LeasePhase.HOLDING);
  }

  @Test
  void awaitHoldingReturnsFalseOnTimeout() throws Exception {
    TokenState real = new TokenState(LOCK, Long.MAX_VALUE, HighestTokenStore.none());
    long start = System.nanoTime();

    boolean holding = real.awaitHolding(TimeUnit.MILLISECONDS.toNanos(200));

    assertThat(holding).isFalse();
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
  }

  @Test
  void awaitHoldingReturnsAtOnceWhenAlreadyHolding() throws Exception {
    grant(5);

    assertThat(state.awaitHolding(0)).isTrue();
  }

  private static void sleepMillis(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
