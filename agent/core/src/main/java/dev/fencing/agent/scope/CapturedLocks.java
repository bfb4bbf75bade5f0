package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.CaptureHook;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.LockScope;
import dev.fencing.agent.bootstrap.SideEffectGate;
import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LossReason;
import dev.fencing.protocol.TokenGrammar;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The application's own locks the agent captured (docs/DESIGN.md section 4, "Captured locks"): a Curator lock or
 * leadership, a jetcd lock. Each distinct lock (path, key) gets, on its first acquisition, a lock runtime of its own
 * (token state, policy, counters, events) under a lock name derived from the path ({@link #lockName}), at most
 * {@code fencing.capture.max-locks} of them ({@link CapturedLockRegistry}). While the application holds it, the
 * acquiring thread (and the work it hands off) is in the lock's scope: its side effects carry the lock's token (the czxid of the lock node, the create
 * revision of the lock key), and are decided by the lock's policy once the lock can no longer be trusted.
 *
 * <p>Trust follows the application's coordinator session on the monotonic clock: the grant's deadline is the time the
 * coordinator last knew the session alive plus the session timeout or lease TTL, minus
 * {@code fencing.capture.safety-margin}. For ZooKeeper that is told by {@code sync}s the agent sends on the
 * application's own handle every third of the session timeout while a lock of the session is held
 * ({@link CuratorSyncLoop}): only the ensemble's leader answers a sync, so a follower cut from the quorum (which keeps
 * answering pings for {@code syncLimit * tickTime}) renews nothing. For etcd, by the application's answered
 * keepalives ({@link JetcdLeaseTracker}). A process paused past it sees the
 * lock expired on its first side effect after resuming, before any of the application's threads ran.
 */
public final class CapturedLocks implements CaptureHook {
  private static final AgentLog LOG = AgentLog.get(CapturedLocks.class);

  private final Scopes scopes;
  private final long marginNanos;
  private final CapturedLockRegistry registry;
  /** The acquisitions the application holds, by hold id. */
  private final Map<String, Hold> holds = new ConcurrentHashMap<>();
  private final CuratorSyncLoop curatorSyncs;
  private final JetcdLeaseTracker jetcdLeases;
  /** The routing gate, once the first capture installed it (or the one of the JVM's declared sections). */
  private volatile ScopedGate scopedGate;

  /** One captured lock: its runtime and the scope its holders' threads run in (allocated once). */
  public static final class Captured {
    final String library;
    final String where;
    final String path;
    final LockRuntime runtime;
    final LockScope scope;

    public String library() {
      return library;
    }

    /** The path or key as the application named it. */
    public String path() {
      return path;
    }

    /** The coordinator it lives on, as the application's client reaches it (see {@code CaptureHook}). */
    public String where() {
      return where;
    }

    public LockRuntime runtime() {
      return runtime;
    }

    /**
     * Whether the coordinator issues the lock's tokens linearizably (ZooKeeper's zxids, etcd's revisions): a
     * Redisson token is a Redis INCR, which a failover to an asynchronously replicated replica can issue again.
     */
    public boolean linearizable() {
      return !"redisson".equals(library);
    }

    Captured(String library, String where, String path, LockRuntime runtime) {
      this.library = library;
      this.where = where;
      this.path = path;
      this.runtime = runtime;
      this.scope = new LockScope(runtime.lock(), runtime.policy()) {
        @Override
        public boolean runsVoid() {
          return runtime.holding();
        }

        @Override
        public void skipped() {
          // captured scopes are entered by an acquisition, never by a section: nothing is skipped
        }
      };
    }
  }

  /** One acquisition the application holds. */
  static final class Hold {
    final Captured lock;
    final Grant grant;
    final long sessionId;
    volatile long timeoutNanos;
    volatile Thread thread;
    volatile Object previous;

    Hold(Captured lock, Grant grant, long sessionId, long timeoutNanos, Thread thread, Object previous) {
      this.lock = lock;
      this.grant = grant;
      this.sessionId = sessionId;
      this.timeoutNanos = timeoutNanos;
      this.thread = thread;
      this.previous = previous;
    }
  }

  /** {@link #ensureScopedGate}, as a class of its own: a method reference would be spun in premain. */
  private final class GateOnFirstCapture implements java.util.function.Supplier<ScopedGate> {
    @Override
    public ScopedGate get() {
      return ensureScopedGate();
    }
  }

  public CapturedLocks(AgentConfig config, Scopes scopes) {
    this.scopes = scopes;
    this.marginNanos = config.captureSafetyMargin().toNanos();
    this.registry = new CapturedLockRegistry(config, scopes, new GateOnFirstCapture());
    this.curatorSyncs = new CuratorSyncLoop(holds.values(), marginNanos);
    this.jetcdLeases = new JetcdLeaseTracker(holds.values(), marginNanos);
  }

  /**
   * The lock name (the {@code lock} label and the lock carried with the token) of an application lock: its path or
   * key without leading and trailing '/', every character outside {@code [A-Za-z0-9._-]} replaced by '.' (so
   * {@code /locks/ledger} is {@code locks.ledger}); null when that is empty or longer than the lock-name limit.
   */
  public static String lockName(String path) {
    if (path == null) {
      return null;
    }
    int from = 0;
    int to = path.length();
    while (from < to && path.charAt(from) == '/') {
      from++;
    }
    while (to > from && path.charAt(to - 1) == '/') {
      to--;
    }
    if (to == from || to - from > TokenGrammar.MAX_LOCK_LENGTH) {
      return null;
    }
    StringBuilder sb = new StringBuilder(to - from);
    for (int i = from; i < to; i++) {
      char c = path.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
          || c == '-';
      sb.append(ok ? c : '.');
    }
    return sb.toString();
  }

  @Override
  public void acquired(String library, String where, String path, String holdId, long token, long sessionId,
      long aliveAtNanos, long timeoutMillis) {
    Captured c = registry.captured(library, where, path);
    if (c == null) {
      return;
    }
    ensureScopedGate();
    long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    Grant g = c.runtime.state().granted(token, sessionId, 0, aliveAtNanos + timeoutNanos - marginNanos);
    Object previous = TokenContext.enterScope(c.scope);
    Hold old = holds.put(holdId, new Hold(c, g, sessionId, timeoutNanos, Thread.currentThread(), previous));
    keepSyncing(c, sessionId);
    if (old != null) {
      LOG.debug("hold " + holdId + " acquired again before its release was seen");
    }
    LOG.debug("captured " + library + " lock " + path + " as '" + c.runtime.lock() + "', token " + token);
  }

  /**
   * A leader latch has no acquiring thread, and what an application does while its latch leads is the leader's work,
   * on whichever thread: the latch's lock decides every side effect outside a scope, as the JVM-wide lock does, from
   * its first leadership until the application closes the latch. After a loss it keeps deciding (the deposed leader's
   * work still running is refused, not passed) until the latch leads again with a new token or is closed. In a JVM
   * with a JVM-wide lock of the agent's (fencing.lock), that lock keeps deciding; the latch is listed in /status only.
   * One latch decides at a time: the first to lead, until it is closed.
   */
  @Override
  public void leading(String library, String where, String path, String holdId, long token, long sessionId,
      long aliveAtNanos, long timeoutMillis) {
    Captured c = registry.captured(library, where, path);
    if (c == null) {
      return;
    }
    ScopedGate routing = ensureScopedGate();
    long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    Grant g = c.runtime.state().granted(token, sessionId, 0, aliveAtNanos + timeoutNanos - marginNanos);
    holds.put(holdId, new Hold(c, g, sessionId, timeoutNanos, null, null));
    keepSyncing(c, sessionId);
    lead(routing, c, library + " leader latch " + path, "token " + token);
  }

  /**
   * A leader selector's leadership (its mutex, {@link #acquired} on the thread that runs {@code takeLeadership}) also
   * decides the side effects outside every scope, as a latch's does ({@link #leading}): the leader's work may run on
   * threads it starts itself while {@code takeLeadership} only waits. Until the selector is closed.
   */
  @Override
  public void leads(String library, String where, String path) {
    Captured c = registry.get(library, where, path);
    if (c != null) {
      Grant g = c.runtime.state().view().grant();
      lead(ensureScopedGate(), c, library + " leader selector " + path, g == null ? "no token (not verified)"
          : "token " + g.token());
    }
  }

  private void lead(ScopedGate routing, Captured c, String what, String token) {
    if (scopes.outside().jvmWide()) {
      LOG.info(what + " leads with " + token + "; the side effects outside scopes stay decided by fencing.lock="
          + scopes.outside().lock());
    } else if (routing.lead(c.runtime.policy())) {
      LOG.info(what + " leads as lock '" + c.runtime.lock() + "', " + token
          + ": it decides the side effects outside every scope");
    } else {
      LOG.warn(what + " leads, but another captured leadership decides the side effects outside every scope until"
          + " it is closed");
    }
  }

  @Override
  public void closed(String library, String where, String path) {
    Captured c = registry.get(library, where, path);
    ScopedGate routing = scopedGate;
    if (c != null && routing != null) {
      routing.unlead(c.runtime.policy());
    }
  }

  @Override
  public void granted(String library, String where, String path, String holdId, long token, long sessionId) {
    Captured c = registry.captured(library, where, path);
    if (c == null) {
      return;
    }
    ensureScopedGate();
    long[] lease = jetcdLeases.lease(sessionId);
    // A lease this JVM never saw granted or kept alive has no known deadline: the lock is not trusted at all.
    long deadline = lease == null ? System.nanoTime() : lease[0] + lease[1] - marginNanos;
    Grant g = c.runtime.state().granted(token, sessionId, 0, deadline);
    holds.put(holdId, new Hold(c, g, sessionId, lease == null ? 0 : lease[1], null, null));
    if (lease == null) {
      LOG.warn(library + " lock " + path + " is held on lease " + Long.toHexString(sessionId)
          + ", which this JVM did not grant: its side effects are refused as after expiry");
    }
  }

  /**
   * An acquisition the agent could not verify is still the application's critical section: its thread enters the
   * lock's scope ({@link #entered}) so that its side effects are refused as after a loss (fenced ones too: there is no
   * token to carry), never passed untagged as if no lock were involved. Until its release, or the next verified grant.
   */
  @Override
  public void unverified(String library, String where, String path, String holdId, String why) {
    Captured c = registry.captured(library, where, path);
    if (c == null) {
      return;
    }
    ensureScopedGate();
    c.runtime.state().unverified("acquired as " + holdId + ", not verified: " + why);
    holds.put(holdId, new Hold(c, null, 0, 0, null, null));
    LOG.warn(library + " lock " + path + " was acquired as " + holdId + " but the agent could not verify it (" + why
        + "): its side effects are refused as after a loss until it is released");
  }

  @Override
  public void entered(String holdId) {
    Hold h = holds.get(holdId);
    if (h == null || h.thread != null || TokenContext.carried() == h.lock.scope) {
      return;
    }
    h.previous = TokenContext.enterScope(h.lock.scope);
    h.thread = Thread.currentThread();
  }

  @Override
  public void renewed(long sessionId, long aliveAtNanos, long timeoutMillis) {
    jetcdLeases.renewed(sessionId, aliveAtNanos, timeoutMillis);
  }

  @Override
  public void released(String library, String holdId) {
    Hold h = holds.remove(holdId);
    if (h == null) {
      return;
    }
    if (h.grant != null) {
      h.lock.runtime.state().released(h.grant, "released by the application");
    }
    // The acquiring thread leaves the scope; a release on another thread (a semaphore lease, a leader latch closed
    // elsewhere) ends the grant, and the acquirer's side effects in the scope are refused until it leaves it.
    if (Thread.currentThread() == h.thread && TokenContext.carried() == h.lock.scope) {
      TokenContext.exitScope(h.previous);
    }
  }

  /** A Curator lock of ZooKeeper session {@code sessionId} is held: syncs keep it trusted ({@link CuratorSyncLoop}). */
  private void keepSyncing(Captured c, long sessionId) {
    if ("curator".equals(c.library)) {
      curatorSyncs.keepSyncing(sessionId);
    }
  }

  @Override
  public void alive(long sessionId, long aliveAtNanos, long timeoutMillis) {
    curatorSyncs.alive(sessionId, aliveAtNanos, timeoutMillis);
  }

  @Override
  public void sessionLost(long sessionId, String why) {
    jetcdLeases.lost(sessionId);
    for (Hold h : holds.values()) {
      if (h.grant != null && h.sessionId == sessionId) {
        if (h.lock.runtime.state().lost(h.grant, LossReason.LEASE_REVOKED)) {
          LOG.warn("captured lock '" + h.lock.runtime.lock() + "' lost: " + why);
        }
      }
    }
  }

  /** The captured locks, in no particular order (for /status). */
  public List<Captured> locks() {
    return registry.locks();
  }

  /**
   * The lock the agent campaigns for on behalf of the application's lock {@code name} of {@code library} (a ShedLock
   * task's, {@link ShedLockRuns}), registered as captured locks are (its lock name, max-locks, metrics, /status); null
   * when it cannot be.
   */
  Captured campaigned(String library, String where, String name) {
    return registry.captured(library, where, name, true);
  }

  /** A lock's identity: the library, the coordinator it lives on and its path or name there. */
  static String identity(String library, String where, String path) {
    return library + '\n' + where + '\n' + path;
  }

  /**
   * The lock name of a lock whose path's name ({@link #lockName}) another captured lock has already: the path's name
   * and a hash of the lock's identity, {@code <name>-<8 hex digits>}, the same in every JVM that captures that lock
   * (cut to fit the lock-name limit).
   */
  static String disambiguated(String name, String identity) {
    String suffix = "-" + String.format("%08x", identity.hashCode());
    int keep = Math.min(name.length(), TokenGrammar.MAX_LOCK_LENGTH - suffix.length());
    return name.substring(0, keep) + suffix;
  }

  /**
   * {@code listener} is told of every lock captured with a metrics label of its own: those captured so far at once,
   * each later one when it is captured (on the capturing thread, once per lock).
   */
  public void onCapture(Consumer<LockRuntime> listener) {
    registry.onCapture(listener);
  }

  /**
   * The gate routes a side effect by the scope its thread is in only when the JVM has declared sections; a JVM that
   * captures a lock gets the routing gate at its first capture, so a JVM that never takes one keeps the plain hot path.
   */
  private ScopedGate ensureScopedGate() {
    ScopedGate routing = scopedGate;
    if (routing != null) {
      return routing;
    }
    synchronized (this) {
      if (scopedGate == null) {
        SideEffectGate g = scopes.gate();
        if (g instanceof ScopedGate) {
          scopedGate = (ScopedGate) g;
        } else {
          ScopedGate installed = new ScopedGate(g, Map.of());
          Fencing.install(installed);
          scopedGate = installed;
        }
      }
      return scopedGate;
    }
  }
}
