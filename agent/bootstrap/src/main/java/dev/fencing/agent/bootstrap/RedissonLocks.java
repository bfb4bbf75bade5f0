package dev.fencing.agent.bootstrap;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * What the Redisson capture advice reports of the application's {@code RFencedLock}s (docs/DESIGN.md section 4,
 * "Captured locks"): Redis answered an acquisition (the token its script {@code INCR}ed, the lease it set), the
 * acquiring thread's blocking call returned holding the lock (it enters the lock's scope), the watchdog extended the
 * lease, the application unlocked. Keyed by the lock's raw name and the acquiring thread's id, as Redisson keys its
 * holds. Redisson's token is not linearizable (Redis replicates asynchronously: a failover can issue a token again).
 * java.base only: Redisson's objects are read by reflection.
 */
public final class RedissonLocks {
  static final String LIBRARY = "redisson";
  /** A token the acquisition's script issued without returning it (Redisson's plain {@code lock}, {@code tryLock}). */
  static final long UNREAD = Long.MIN_VALUE;
  /** Redisson's RFuture over a stage (built at run time, as every library name the agent jar must not relocate). */
  private static final String WRAPPER = String.join(".", "org", "redisson", "misc", "CompletableFutureWrapper");

  /** An acquisition Redis granted, not yet seen returned on its thread: {token or UNREAD, sent at, lease ms}. */
  private static final Map<String, long[]> ANSWERED = new ConcurrentHashMap<>();
  /** The holds the application's threads have, by key. */
  private static final Map<String, Held> HELD = new ConcurrentHashMap<>();

  /** One hold: re-entries counted as Redisson counts them, on one lease of its own (the session of the grant). */
  static final class Held {
    final String holdId;
    final String rawName;
    final long sessionId;
    int depth;
    /** When Redis lets the lease lapse unless extended (the send time of its last extension plus the lease). */
    volatile long leaseEndNanos;

    Held(String holdId, String rawName, long sessionId, int depth, long leaseEndNanos) {
      this.holdId = holdId;
      this.rawName = rawName;
      this.sessionId = sessionId;
      this.depth = depth;
      this.leaseEndNanos = leaseEndNanos;
    }
  }

  private RedissonLocks() {}

  static String key(String rawName, long threadId) {
    return rawName + '\n' + threadId;
  }

  /**
   * The acquisition script of lock {@code rawName} for thread {@code threadId} was sent at {@code sentAtNanos} with a
   * lease of {@code leaseMillis}, Redisson's future for its answer being {@code eval}: returns the future to give the
   * caller instead (a Redisson {@code CompletableFutureWrapper}), which records a granted acquisition before Redisson's
   * own continuations run, so before the acquiring thread wakes up. {@code eval} itself when it cannot.
   */
  public static Object evaluating(String rawName, long threadId, long sentAtNanos, long leaseMillis, Object eval) {
    try {
      CompletionStage<?> recorded = ((CompletionStage<?>) eval).thenApply(result -> {
        long token = grantedToken(result);
        if (token != 0) {
          ANSWERED.put(key(rawName, threadId), new long[] {token, sentAtNanos, leaseMillis});
        }
        return result;
      });
      Class<?> wrapper = Class.forName(WRAPPER, false, eval.getClass().getClassLoader());
      return wrapper.getConstructor(CompletionStage.class).newInstance(recorded);
    } catch (Throwable t) {
      return eval;
    }
  }

  /**
   * What Redisson's acquisition script answered: the token it issued ({@code {-1, token}}), {@link #UNREAD} when it
   * granted the lock without returning the token ({@code nil}, or {@code true} as Redisson decodes nil for
   * {@code tryLock}), 0 when the lock is held by another (its remaining TTL, {@code false}).
   */
  static long grantedToken(Object result) {
    if (result == null || Boolean.TRUE.equals(result)) {
      return UNREAD;
    }
    if (result instanceof List<?> && ((List<?>) result).size() == 2) {
      List<?> l = (List<?>) result;
      if (l.get(0) instanceof Long && (Long) l.get(0) == -1L && l.get(1) instanceof Long) {
        return (Long) l.get(1);
      }
    }
    return 0;
  }

  /**
   * A blocking acquisition of {@code lock} (raw name {@code rawName}) returned holding it on the calling thread: the
   * hold begins (a re-entry renews its lease), and the thread enters the lock's scope. The token is the one the
   * script returned, or else (Redisson's {@code lock}, {@code tryLock} issue one without returning it) the lock's
   * current token read with {@code getToken()}. Nothing unless Redis was seen granting it to this thread.
   */
  public static void returned(Object lock, String rawName) {
    if (ANSWERED.isEmpty()) {
      return;
    }
    long threadId = Thread.currentThread().getId();
    String key = key(rawName, threadId);
    long[] answer = ANSWERED.remove(key);
    if (answer == null) {
      return;
    }
    long leaseEnd = answer[1] + TimeUnit.MILLISECONDS.toNanos(answer[2]);
    Held held = HELD.get(key);
    if (held != null && held.leaseEndNanos - System.nanoTime() > 0) {
      // A re-entry while the lease runs: Redisson counts it, and extended the lease.
      held.depth++;
      held.leaseEndNanos = leaseEnd;
      Captures.renewed(held.sessionId, answer[1], answer[2]);
      return;
    }
    if (held != null) {
      // The thread's last hold lapsed in Redis without an unlock (Redis took it back): this is a new hold.
      HELD.remove(key);
      Captures.released(LIBRARY, held.holdId);
      Captures.sessionLost(held.sessionId, "lapsed");
    }
    String name = rawName;
    String holdId = LIBRARY + ':' + rawName + '@' + threadId;
    long sessionId = ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE;
    HELD.put(key, new Held(holdId, rawName, sessionId, 1, leaseEnd));
    try {
      name = (String) LockLibraries.call(lock, "getName");
      long token = answer[0];
      if (token == UNREAD) {
        Object t = LockLibraries.call(lock, "getToken");
        token = t instanceof Long ? (Long) t : UNREAD;
      }
      if (token > 0) {
        Captures.acquired(LIBRARY, where(), name, holdId, token, sessionId, answer[1], answer[2]);
        return;
      }
      Captures.unverified(LIBRARY, where(), name, holdId, "its token could not be read");
    } catch (Throwable t) {
      Captures.unverified(LIBRARY, where(), name, holdId, "its token could not be read: " + t);
    }
    Captures.entered(holdId);
  }

  /**
   * The application unlocks {@code rawName} for thread {@code threadId}: one re-entry less; the last one ends the hold
   * (and the scope of the acquiring thread, when it is the one that unlocks).
   */
  public static void unlocking(String rawName, long threadId) {
    if (HELD.isEmpty()) {
      return;
    }
    String key = key(rawName, threadId);
    Held held = HELD.get(key);
    if (held != null && --held.depth <= 0) {
      HELD.remove(key);
      Captures.released(LIBRARY, held.holdId);
      Captures.sessionLost(held.sessionId, "released"); // the hold's own lease: forgotten with it
    }
  }

  /**
   * Redisson's watchdog sent, at {@code sentAtNanos}, a round extending to {@code leaseMillis} the leases of the locks
   * named in {@code renewing} (its keys: raw names); when the round completes without error, the holds whose lock is
   * still among them (the watchdog drops a lock Redis no longer holds for it) were extended from the send time.
   */
  public static void renewing(CompletionStage<?> round, Map<?, ?> renewing, long sentAtNanos, long leaseMillis) {
    if (HELD.isEmpty()) {
      return;
    }
    round.whenComplete((ok, error) -> {
      if (error != null) {
        return;
      }
      for (Held h : HELD.values()) {
        if (renewing.containsKey(h.rawName)) {
          h.leaseEndNanos = sentAtNanos + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
          Captures.renewed(h.sessionId, sentAtNanos, leaseMillis);
        }
      }
    });
  }

  /**
   * Where a Redisson lock lives, for its identity: one name for every Redis deployment (a JVM talking to two Redis
   * deployments with a lock of the same name has them captured as one lock).
   */
  static String where() {
    return "redis";
  }

  /** Forgets every hold (tests). */
  static void reset() {
    ANSWERED.clear();
    HELD.clear();
  }
}
