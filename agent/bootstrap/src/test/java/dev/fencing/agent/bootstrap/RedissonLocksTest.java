package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How the bridge reads Redisson's answers and counts holds: the token a script returned or the one read afterwards,
 * re-entries counted until the last unlock, a hold whose lease lapsed replaced by the next acquisition, the watchdog's
 * rounds renewing the holds it still keeps.
 */
class RedissonLocksTest {
  /** A stand-in for a fenced lock: the bridge calls its public getName and getToken. */
  public static final class Lock {
    long token = 41;

    public String getName() {
      return "ledger";
    }

    public Long getToken() {
      return token;
    }
  }

  private final List<String> reports = new ArrayList<>();

  private final CaptureHook recording = new CaptureHook() {
    @Override
    public void acquired(String library, String where, String name, String holdId, long token, long sessionId,
        long aliveAtNanos, long timeoutMillis) {
      reports.add("acquired " + name + " " + token + " " + timeoutMillis);
    }

    @Override
    public void unverified(String library, String where, String name, String holdId, String why) {
      reports.add("unverified " + name);
    }

    @Override
    public void released(String library, String holdId) {
      reports.add("released");
    }

    @Override
    public void alive(long sessionId, long aliveAtNanos, long timeoutMillis) {}

    @Override
    public void granted(String library, String where, String name, String holdId, long token, long sessionId) {}

    @Override
    public void entered(String holdId) {
      reports.add("entered");
    }

    @Override
    public void renewed(long sessionId, long aliveAtNanos, long timeoutMillis) {
      reports.add("renewed " + timeoutMillis);
    }

    @Override
    public void sessionLost(long sessionId, String why) {
      reports.add("session lost");
    }

    @Override
    public void leading(String library, String where, String name, String holdId, long token, long sessionId,
        long aliveAtNanos, long timeoutMillis) {}

    @Override
    public void leads(String library, String where, String name) {}

    @Override
    public void closed(String library, String where, String name) {}
  };

  @AfterEach
  void reset() {
    RedissonLocks.reset();
    Captures.install(null);
  }

  private static void answer(Object result, long leaseMillis) {
    CompletableFuture<Object> eval = new CompletableFuture<>();
    Object returned = RedissonLocks.evaluating("ledger", Thread.currentThread().getId(), System.nanoTime(), leaseMillis,
        eval);
    assertThat(returned).as("no Redisson on this class path: Redisson's own future").isSameAs(eval);
    eval.complete(result);
  }

  @Test
  void readsTheTokenTheScriptReturnedOrNothingForALockHeldByAnother() {
    assertThat(RedissonLocks.grantedToken(Arrays.asList(-1L, 7L))).isEqualTo(7);
    assertThat(RedissonLocks.grantedToken(null)).isEqualTo(RedissonLocks.UNREAD);
    assertThat(RedissonLocks.grantedToken(Boolean.TRUE)).isEqualTo(RedissonLocks.UNREAD);
    assertThat(RedissonLocks.grantedToken(Arrays.asList(2500L, -1L))).isZero();
    assertThat(RedissonLocks.grantedToken(2500L)).isZero();
    assertThat(RedissonLocks.grantedToken(Boolean.FALSE)).isZero();
  }

  @Test
  void aHoldBeginsWhenTheBlockingCallReturnsAndEndsAtTheLastUnlock() {
    Captures.install(recording);
    long thread = Thread.currentThread().getId();
    Lock lock = new Lock();
    RedissonLocks.returned(lock, "ledger"); // nothing granted by Redis: nothing to report
    assertThat(reports).isEmpty();

    answer(Arrays.asList(-1L, 7L), 30_000);
    RedissonLocks.returned(lock, "ledger");
    answer(null, 30_000); // a re-entry (lock(), which returns no token)
    RedissonLocks.returned(lock, "ledger");
    RedissonLocks.unlocking("ledger", thread);
    assertThat(reports).containsExactly("acquired ledger 7 30000", "renewed 30000");
    RedissonLocks.unlocking("ledger", thread);
    assertThat(reports).endsWith("released", "session lost");

    answer(Boolean.TRUE, 10_000); // tryLock(): the token is read
    RedissonLocks.returned(lock, "ledger");
    assertThat(reports).endsWith("acquired ledger 41 10000");
  }

  @Test
  void anAcquisitionAfterTheLeaseLapsedIsANewHold() {
    Captures.install(recording);
    Lock lock = new Lock();
    answer(Arrays.asList(-1L, 7L), 0); // a lease already over
    RedissonLocks.returned(lock, "ledger");
    answer(Arrays.asList(-1L, 9L), 30_000);
    RedissonLocks.returned(lock, "ledger");
    assertThat(reports).containsExactly("acquired ledger 7 0", "released", "session lost", "acquired ledger 9 30000");
  }

  @Test
  void theWatchdogRenewsTheHoldsItStillKeeps() {
    Captures.install(recording);
    answer(Arrays.asList(-1L, 7L), 3000);
    RedissonLocks.returned(new Lock(), "ledger");
    CompletableFuture<Void> round = new CompletableFuture<>();
    RedissonLocks.renewing(round, Map.of("other", 1), System.nanoTime(), 3000);
    round.complete(null);
    CompletableFuture<Void> next = new CompletableFuture<>();
    RedissonLocks.renewing(next, Map.of("ledger", 1), System.nanoTime(), 3000);
    next.complete(null);
    CompletableFuture<Void> failed = new CompletableFuture<>();
    RedissonLocks.renewing(failed, Map.of("ledger", 1), System.nanoTime(), 3000);
    failed.completeExceptionally(new RuntimeException("Redis unreachable"));
    assertThat(reports).containsExactly("acquired ledger 7 3000", "renewed 3000");
  }
}
