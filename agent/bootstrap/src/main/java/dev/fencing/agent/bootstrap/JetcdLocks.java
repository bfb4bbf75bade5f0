package dev.fencing.agent.bootstrap;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the jetcd capture advice reads of the application's jetcd (by reflection: see {@link LockLibraries}): a lock
 * acquired (its key's create revision is the token, read with the application's own connection), released, an
 * election's leadership won by a campaign (the campaign key's create revision) and resigned, and the
 * application's leases as they are granted and kept alive (how long each is known alive). java.base only.
 */
public final class JetcdLocks {
  /** Per lease: the send time of its oldest keepalive not answered yet. */
  private static final Map<Long, Long> UNANSWERED = new ConcurrentHashMap<>();

  private JetcdLocks() {}

  /**
   * {@code LockImpl.lock(name, leaseId)} returned {@code result}: returns the future the application gets instead,
   * which completes with jetcd's response once the key's create revision is read and the grant recorded; the thread
   * that waits for it enters the lock's scope ({@link CapturedLockFuture}). A key that is gone or on another lease by
   * then (the lease ended after etcd granted the lock), or that cannot be read, is an acquisition the agent cannot
   * verify ({@link CaptureHook#unverified}): the waiting thread still enters the scope, where its side effects are
   * refused. Without a capture hook, {@code result}.
   */
  public static CompletableFuture<?> locking(Object lockImpl, Object name, long leaseId, CompletableFuture<?> result) {
    return captured(result, (response, out) -> {
      Object key = LockLibraries.call(response, "getKey");
      Object kv = kv(lockImpl);
      Method get = kv.getClass().getMethod("get", key.getClass());
      get.setAccessible(true);
      ((CompletableFuture<?>) get.invoke(kv, key)).whenComplete((read, readError) -> {
        try {
          String holdId = text(key);
          List<?> kvs = readError == null ? (List<?>) LockLibraries.call(read, "getKvs") : List.of();
          long lease = kvs.isEmpty() ? 0 : (Long) LockLibraries.call(kvs.get(0), "getLease");
          if (!kvs.isEmpty() && lease == leaseId) {
            Captures.granted("jetcd", where(response), text(name), holdId,
                (Long) LockLibraries.call(kvs.get(0), "getCreateRevision"), leaseId);
          } else {
            Captures.unverified("jetcd", where(response), text(name), holdId, readError != null
                ? "its key could not be read: " + readError : kvs.isEmpty()
                    ? "its key is gone (lease " + Long.toHexString(leaseId) + " ended after etcd granted the lock)"
                    : "its key is on lease " + Long.toHexString(lease) + ", not " + Long.toHexString(leaseId));
          }
          out.holdId = holdId;
        } catch (Throwable t) {
          // not captured
        }
        out.complete(response);
      });
    });
  }

  /** Where a jetcd response's lock lives: the etcd cluster id of its header, in hex ("etcd" when unreadable). */
  static String where(Object response) {
    try {
      return "etcd cluster " + Long.toHexString((Long) LockLibraries.call(LockLibraries.call(response, "getHeader"),
          "getClusterId"));
    } catch (Throwable t) {
      return "etcd";
    }
  }

  /** {@code LockImpl.unlock(key)}: the hold of {@code key} ends. */
  public static void unlocking(Object key) {
    try {
      Captures.released("jetcd", text(key));
    } catch (Throwable t) {
      // nothing held under that key
    }
  }

  /**
   * {@code ElectionImpl.campaign(name, leaseId, proposal)} returned {@code result}: returns the future the application
   * gets instead, which completes with jetcd's response once the leadership is recorded (the campaign key's create
   * revision, which the response's leader key carries, is the token; the key must be on {@code leaseId}); the thread
   * that waits for it enters the election's scope. Without a capture hook, {@code result}.
   */
  public static CompletableFuture<?> campaigning(Object name, long leaseId, CompletableFuture<?> result) {
    return captured(result, (response, out) -> {
      Object leader = LockLibraries.call(response, "getLeader");
      if ((Long) LockLibraries.call(leader, "getLease") == leaseId) {
        String holdId = text(LockLibraries.call(leader, "getKey"));
        Captures.granted("jetcd", where(response), text(name), holdId, (Long) LockLibraries.call(leader, "getRevision"),
            leaseId);
        out.holdId = holdId;
      }
      out.complete(response);
    });
  }

  /** Records a grant from jetcd's response and completes the application's future with that response. */
  private interface Capture {
    void accept(Object response, CapturedLockFuture out) throws Exception;
  }

  /**
   * The future the application gets instead of {@code result} (itself without a capture hook): jetcd's error passes
   * on as it is; its response goes to {@code capture}, which completes the future once the grant is recorded. If the
   * capture fails, the application gets jetcd's response as without the agent, not captured.
   */
  private static CompletableFuture<?> captured(CompletableFuture<?> result, Capture capture) {
    if (result == null || Captures.hook() == CaptureHook.NOOP) {
      return result;
    }
    CapturedLockFuture out = new CapturedLockFuture();
    result.whenComplete((response, error) -> {
      if (error != null) {
        out.completeExceptionally(error);
        return;
      }
      try {
        capture.accept(response, out);
      } catch (Throwable t) {
        out.complete(response); // not captured: a no-op if the capture completed it already
      }
    });
    return out;
  }

  /** {@code ElectionImpl.resign(leaderKey)}: the leadership of that key ends before the key is deleted. */
  public static void resigning(Object leaderKey) {
    try {
      Captures.released("jetcd", text(LockLibraries.call(leaderKey, "getKey")));
    } catch (Throwable t) {
      // nothing held under that key
    }
  }

  /** {@code LeaseImpl.grant} called at {@code sentAtNanos} returned {@code result}: the lease lives its TTL from then. */
  public static void leaseGranting(CompletableFuture<?> result, long sentAtNanos) {
    if (result == null || Captures.hook() == CaptureHook.NOOP) {
      return;
    }
    result.whenComplete((granted, error) -> {
      try {
        if (error == null) {
          Captures.renewed((Long) LockLibraries.call(granted, "getID"), sentAtNanos,
              1000 * (Long) LockLibraries.call(granted, "getTTL"));
        }
      } catch (Throwable t) {
        // the lease's deadline is not known: a lock on it is not trusted
      }
    });
  }

  /**
   * jetcd's keepalive loop is about to consider {@code observer}'s lease: it sends a keepalive when the lease's next
   * keepalive time has passed (the same test as jetcd's, just before it). The oldest unanswered send is kept: a reply
   * is credited with the earliest send it may answer.
   */
  public static void keepAliveSending(Object observer) {
    try {
      if ((Long) LockLibraries.call(observer, "getNextKeepAlive") < System.currentTimeMillis()) {
        UNANSWERED.putIfAbsent((Long) LockLibraries.call(observer, "getLeaseId"), System.nanoTime());
      }
    } catch (Throwable t) {
      // no send time: the reply does not extend the deadline
    }
  }

  /** A keepalive reply (id, TTL): the lease lives TTL from its send; TTL 0 or less: the lease is gone. */
  public static void keepAliveAnswered(Object reply) {
    try {
      long id = (Long) LockLibraries.call(reply, "getID");
      long ttl = (Long) LockLibraries.call(reply, "getTTL");
      Long sent = UNANSWERED.remove(id);
      if (ttl <= 0) {
        Captures.sessionLost(id, "etcd lease " + Long.toHexString(id) + " expired");
      } else if (sent != null) {
        Captures.renewed(id, sent, 1000 * ttl);
      }
    } catch (Throwable t) {
      // the deadline is not extended: the safe side
    }
  }

  /** A KV client on the lock client's own connection (jetcd's package-private KVImpl). */
  private static Object kv(Object lockImpl) throws Exception {
    Method manager = lockImpl.getClass().getSuperclass().getDeclaredMethod("connectionManager");
    manager.setAccessible(true);
    Class<?> kvClass = Class.forName(lockImpl.getClass().getPackageName() + ".KVImpl", true,
        lockImpl.getClass().getClassLoader());
    Constructor<?> c = kvClass.getDeclaredConstructor(manager.getReturnType());
    c.setAccessible(true);
    return c.newInstance(manager.invoke(lockImpl));
  }

  /** A ByteSequence as UTF-8 text. */
  private static String text(Object byteSequence) throws Exception {
    return new String((byte[]) LockLibraries.call(byteSequence, "getBytes"), StandardCharsets.UTF_8);
  }
}
