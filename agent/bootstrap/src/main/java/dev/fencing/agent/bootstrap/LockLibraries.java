package dev.fencing.agent.bootstrap;

import java.lang.ref.WeakReference;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the capture advice reads of the application's lock libraries (Curator and its ZooKeeper client, jetcd), by
 * reflection on the objects the advice hands over. Reflection, not the libraries' types, because the agent jar bundles
 * its own, relocated ZooKeeper client and jetcd: the jar's relocation would rewrite every reference to
 * {@code org.apache.zookeeper} or {@code io.etcd} in the advice to the agent's private copies, which the application's
 * classes are not. Runs on acquisition, release and the syncs that keep a captured ZooKeeper lock trusted, never per
 * side effect. java.base only.
 */
public final class LockLibraries {
  private LockLibraries() {}

  /**
   * Per thread: how many {@code InterProcessSemaphoreV2.acquire} calls are running. The semaphore takes a mutex of its
   * own ({@code <path>/locks}) around each lease it creates: that mutex is Curator's, not the application's lock, and
   * is not captured.
   */
  private static final ThreadLocal<int[]> IN_SEMAPHORE = ThreadLocal.withInitial(() -> new int[1]);

  /**
   * Per ZooKeeper session: the application's handle of it (weakly: the application closes or replaces it), which
   * {@link #zooKeeperSync} sends its syncs on.
   */
  private static final Map<Long, WeakReference<Object>> SESSIONS = new ConcurrentHashMap<>();

  /**
   * {@code org.apache.zookeeper.AsyncCallback$VoidCallback}, built at run time: the agent jar relocates its own
   * ZooKeeper client, and the relocation rewrites every string constant naming {@code org.apache.zookeeper}.
   */
  private static final String VOID_CALLBACK = String.join(".", "org", "apache", "zookeeper",
      "AsyncCallback$VoidCallback");

  /**
   * Per thread: the LeaderSelector whose {@code doWork} runs on it, until its mutex is acquired (the leadership's own
   * acquisition; a lock the application takes inside {@code takeLeadership} is not the leadership).
   */
  private static final ThreadLocal<Object> SELECTOR_WORKING = new ThreadLocal<>();

  /** Per LeaderSelector (weakly): {where, path} of the lock it led with, for its close. */
  private static final Map<Object, String[]> SELECTORS = Collections.synchronizedMap(new WeakHashMap<>());

  /** Per LeaderLatch (weakly): the latch node it leads with, until it loses or gives up the leadership. */
  private static final Map<Object, String> LEADING = Collections.synchronizedMap(new WeakHashMap<>());

  /**
   * Curator's {@code LockInternals} now holds the lock node {@code ourPath} under {@code basePath}, through
   * {@code client} (a CuratorFramework): reads the node's czxid (the token) and its session with the application's
   * own client, and reports the acquisition. A node that is gone, is not this session's or cannot be read is an
   * acquisition the agent cannot verify ({@link CaptureHook#unverified}): the thread still enters the lock's scope,
   * where its side effects are refused. A semaphore's own mutex is not captured.
   */
  public static void curatorAcquired(Object client, String basePath, String ourPath) {
    try {
      if (IN_SEMAPHORE.get()[0] > 0) {
        return;
      }
      Object selector = SELECTOR_WORKING.get();
      SELECTOR_WORKING.remove();
      String where = curatorWhere(client);
      String path = inNamespace(client, basePath);
      long[] node = verifiedNode(client, ourPath, ourPath, where, path);
      if (node != null) {
        Captures.acquired("curator", where, path, ourPath, node[0], node[1], node[2], node[3]);
      } else {
        Captures.entered(ourPath);
      }
      if (selector != null) {
        SELECTORS.put(selector, new String[] {where, path});
        Captures.leads("curator", where, path);
      }
    } catch (Throwable t) {
      // not captured: the application's lock works as without the agent (its coordinator is not even named)
    }
  }

  /**
   * {@link #curatorNode} of {@code nodePath}, or null after reporting the hold {@code holdId} of the lock {@code path}
   * on {@code where} as unverified when the node is not the session's or cannot be read.
   */
  private static long[] verifiedNode(Object client, String nodePath, String holdId, String where, String path) {
    String why;
    try {
      return curatorNode(client, nodePath);
    } catch (NotVerified e) {
      why = e.getMessage();
    } catch (Throwable t) {
      Throwable cause = t instanceof java.lang.reflect.InvocationTargetException && t.getCause() != null
          ? t.getCause() : t;
      why = "its node could not be read: " + cause;
    }
    Captures.unverified("curator", where, path, holdId, why);
    return null;
  }

  /** What {@link #curatorNode} found instead of the session's own node. */
  private static final class NotVerified extends Exception {
    NotVerified(String why) {
      super(why, null, false, false);
    }
  }

  /**
   * A Curator {@code LeaderSelector} starts ({@code selector}) or ends ({@code null}) its {@code doWork} on this thread:
   * the mutex it acquires there is its leadership ({@link CaptureHook#leads}).
   */
  public static void curatorSelectorWorking(Object selector) {
    if (selector == null) {
      SELECTOR_WORKING.remove();
    } else {
      SELECTOR_WORKING.set(selector);
    }
  }

  /** The application closed the {@code LeaderSelector} {@code selector}: its lock stops leading. */
  public static void curatorSelectorClosed(Object selector) {
    String[] led = SELECTORS.remove(selector);
    if (led != null) {
      Captures.closed("curator", led[0], led[1]);
    }
  }

  /** An {@code InterProcessSemaphoreV2.acquire} starts ({@code entering}) or ends on this thread. */
  public static void curatorSemaphoreAcquiring(boolean entering) {
    int[] depth = IN_SEMAPHORE.get();
    depth[0] += entering ? 1 : -1;
  }

  /**
   * A semaphore of one lease (an {@code InterProcessSemaphoreMutex}, or an {@code InterProcessSemaphoreV2} of
   * {@code maxLeases} 1: a mutex) returned {@code leases} (a collection of Lease; null: timed out) to the calling
   * thread; its lease nodes live under {@code leasesPath} ({@code <path>/leases}). The lock is the semaphore's path;
   * the hold is the lease node's name (unique: Curator's protected name carries a random UUID), which is all that
   * {@code Lease} tells at release.
   */
  public static void curatorSemaphoreAcquired(Object client, String leasesPath, int maxLeases, Object leases) {
    try {
      if (maxLeases != 1 || !(leases instanceof Iterable)) {
        return;
      }
      String path = leasesPath.endsWith("/leases") ? leasesPath.substring(0, leasesPath.length() - 7) : leasesPath;
      String where = curatorWhere(client);
      String lock = inNamespace(client, path);
      for (Object lease : (Iterable<?>) leases) {
        String nodeName = (String) call(lease, "getNodeName");
        long[] node = verifiedNode(client, leasesPath + "/" + nodeName, nodeName, where, lock);
        if (node != null) {
          Captures.acquired("curator", where, lock, nodeName, node[0], node[1], node[2], node[3]);
        } else {
          Captures.entered(nodeName);
        }
      }
    } catch (Throwable t) {
      // not captured
    }
  }

  /** The application returns the semaphore lease {@code lease} (a Lease): its hold ends before its node is deleted. */
  public static void curatorLeaseReturned(Object lease) {
    try {
      if (lease != null) {
        Captures.released("curator", (String) call(lease, "getNodeName"));
      }
    } catch (Throwable t) {
      // nothing held under that lease
    }
  }

  /**
   * A Curator {@code LeaderLatch} ({@code latch}, on {@code latchPath}, through {@code client}) set its leadership
   * from {@code was} to {@code now}, its node being {@code ourPath} and its state {@code state} (LATENT, STARTED,
   * CLOSED). Gaining it: the node's czxid is read (with the application's own ZooKeeper handle, not Curator's retry
   * loop: this runs on the ZooKeeper event thread) and the latch leads the side effects outside scopes; losing it ends
   * the grant; a closed latch stops leading.
   */
  public static void curatorLeadership(Object latch, Object client, String latchPath, String ourPath, boolean was,
      boolean now, String state) {
    try {
      if (!was && now && ourPath != null) {
        String where = curatorWhere(client);
        String path = inNamespace(client, latchPath);
        long[] node = verifiedNode(client, ourPath, ourPath, where, path);
        LEADING.put(latch, ourPath);
        if (node != null) {
          Captures.leading("curator", where, path, ourPath, node[0], node[1], node[2], node[3]);
        } else {
          Captures.leads("curator", where, path); // leads untrusted: the leader's work is refused
        }
      } else if (was && !now) {
        String hold = LEADING.remove(latch);
        if (hold != null) {
          Captures.released("curator", hold);
        }
      }
      if ("CLOSED".equals(state)) {
        Captures.closed("curator", curatorWhere(client), inNamespace(client, latchPath));
      }
    } catch (Throwable t) {
      // not captured
    }
  }

  /** Where a Curator client's locks live: its ZooKeeper connect string. */
  static String curatorWhere(Object client) throws Exception {
    return "zookeeper " + call(call(client, "getZookeeperClient"), "getCurrentConnectionString");
  }

  /**
   * The ZooKeeper path of {@code path} as a Curator client names it: under the client's namespace when it has one
   * (the paths the application gives Curator are relative to it).
   */
  static String inNamespace(Object client, String path) throws Exception {
    Object namespace = call(client, "getNamespace");
    return namespace == null || namespace.toString().isEmpty() ? path : "/" + namespace + path;
  }

  /**
   * The node {@code path} read with the raw ZooKeeper handle behind {@code client} (a CuratorFramework): {czxid,
   * session id, when the session was surely alive (the read's start), negotiated session timeout in ms}. Throws
   * {@link NotVerified} when the node is gone or not this session's ephemeral node (the session that created it
   * expired around the acquisition, and the client has a new one). Curator's paths are relative to the client's
   * namespace.
   */
  private static long[] curatorNode(Object client, String path) throws Exception {
    long aliveAt = System.nanoTime(); // the server answers the read below: the session lives at least until then
    String full = inNamespace(client, path);
    Object zk = call(call(client, "getZookeeperClient"), "getZooKeeper");
    Method exists = zk.getClass().getMethod("exists", String.class, boolean.class);
    Object stat = exists.invoke(zk, full, false);
    long session = (Long) call(zk, "getSessionId");
    if (stat == null) {
      throw new NotVerified("its node " + full + " is gone (the session that created it ended)");
    }
    long owner = (Long) call(stat, "getEphemeralOwner");
    if (owner != session) {
      throw new NotVerified("its node " + full + " is session 0x" + Long.toHexString(owner) + "'s, not the client's"
          + " session 0x" + Long.toHexString(session) + " (the session that created it ended)");
    }
    SESSIONS.put(session, new WeakReference<>(zk));
    return new long[] {(Long) call(stat, "getCzxid"), session, aliveAt,
        ((Integer) call(zk, "getSessionTimeout")).longValue()};
  }

  /**
   * Sends a {@code sync} on the application's own ZooKeeper handle of session {@code sessionId} (the one its captured
   * lock was read with). A sync is answered only through the ensemble's leader, so an answer proves the server the
   * client talks to still follows one (a follower cut from the quorum keeps answering pings, never syncs): when it is
   * answered without error, {@link Captures#alive} gets its send time. False when that handle is gone (closed, or
   * replaced after its session expired) or the sync could not be sent: no answer, the lock's trust runs out.
   */
  public static boolean zooKeeperSync(long sessionId) {
    try {
      WeakReference<Object> ref = SESSIONS.get(sessionId);
      Object zk = ref == null ? null : ref.get();
      if (zk == null || (Long) call(zk, "getSessionId") != sessionId) {
        SESSIONS.remove(sessionId);
        return false;
      }
      long timeoutMillis = ((Integer) call(zk, "getSessionTimeout")).longValue();
      Class<?> callback = Class.forName(VOID_CALLBACK, false, zk.getClass().getClassLoader());
      long sent = System.nanoTime();
      Object answer = Proxy.newProxyInstance(callback.getClassLoader(), new Class<?>[] {callback},
          new SyncAnswer(sessionId, sent, timeoutMillis));
      zk.getClass().getMethod("sync", String.class, callback, Object.class).invoke(zk, "/", answer, null);
      return true;
    } catch (Throwable t) {
      return false; // not sent: no answer will renew the lock, which expires (the safe side)
    }
  }

  /** The callback of one sync ({@code VoidCallback.processResult(int rc, String path, Object ctx)}). */
  private static final class SyncAnswer implements InvocationHandler {
    private final long sessionId;
    private final long sentAtNanos;
    private final long timeoutMillis;

    SyncAnswer(long sessionId, long sentAtNanos, long timeoutMillis) {
      this.sessionId = sessionId;
      this.sentAtNanos = sentAtNanos;
      this.timeoutMillis = timeoutMillis;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) {
      switch (method.getName()) {
        case "processResult":
          if (args != null && args.length > 0 && Integer.valueOf(0).equals(args[0])) {
            Captures.alive(sessionId, sentAtNanos, timeoutMillis); // rc OK: the leader answered
          }
          return null;
        case "equals":
          return proxy == args[0];
        case "hashCode":
          return System.identityHashCode(proxy);
        default:
          return "fencing-agent sync of session 0x" + Long.toHexString(sessionId);
      }
    }
  }

  /** Calls the public no-argument or one-String-argument method {@code name} of {@code target}. */
  static Object call(Object target, String name, String... arg) throws Exception {
    Method m = arg.length == 0 ? target.getClass().getMethod(name) : target.getClass().getMethod(name, String.class);
    if (!m.canAccess(target)) {
      m.setAccessible(true); // a public method of a non-public implementation class, in the application's loader
    }
    return arg.length == 0 ? m.invoke(target) : m.invoke(target, (Object) arg[0]);
  }
}
