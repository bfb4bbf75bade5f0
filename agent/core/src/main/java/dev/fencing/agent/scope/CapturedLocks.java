package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.CaptureHook;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.LockLibraries;
import dev.fencing.agent.bootstrap.LockScope;
import dev.fencing.agent.bootstrap.SideEffectGate;
import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.events.FencingEvents;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.policy.SideEffectCounters;
import dev.fencing.agent.policy.SideEffectPolicy;
import dev.fencing.agent.threads.AgentThreads;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LossReason;
import dev.fencing.agent.token.TokenState;
import dev.fencing.protocol.TokenGrammar;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The application's own locks the agent captured (docs/DESIGN.md section 4, "Captured locks"): a Curator lock or
 * leadership, a jetcd lock. Each distinct lock (path, key) gets, on its first acquisition, a lock runtime of its own
 * (token state, policy, counters, events) under a lock name derived from the path ({@link #lockName}), at most
 * {@code fencing.capture.max-locks} of them. While the application holds it, the acquiring thread (and the work it
 * hands off) is in the lock's scope: its side effects carry the lock's token (the czxid of the lock node, the create
 * revision of the lock key), and are decided by the lock's policy once the lock can no longer be trusted.
 *
 * <p>Trust follows the application's coordinator session on the monotonic clock: the grant's deadline is the time the
 * coordinator last knew the session alive plus the session timeout or lease TTL, minus
 * {@code fencing.capture.safety-margin}. For ZooKeeper that is told by {@code sync}s the agent sends on the
 * application's own handle every third of the session timeout while a lock of the session is held
 * ({@link #syncLoop}): only the ensemble's leader answers a sync, so a follower cut from the quorum (which keeps
 * answering pings for {@code syncLimit * tickTime}) renews nothing. For etcd, by the application's answered
 * keepalives. A process paused past it sees the
 * lock expired on its first side effect after resuming, before any of the application's threads ran.
 */
public final class CapturedLocks implements CaptureHook {
  private static final AgentLog LOG = AgentLog.get(CapturedLocks.class);

  private final AgentConfig config;
  private final Scopes scopes;
  private final long marginNanos;
  private final int maxLocks;
  /** Each captured lock by its identity (library, coordinator, path: {@link #identity}). */
  private final Map<String, Captured> byIdentity = new ConcurrentHashMap<>();
  /** The lock names in use (a name is each lock's own: two identities never share one). */
  private final Map<String, Captured> byName = new ConcurrentHashMap<>();
  private final Map<String, Hold> holds = new ConcurrentHashMap<>();
  private final Set<String> refused = ConcurrentHashMap.newKeySet();
  /** Told of each lock captured, with its own counters (the metrics add its series); see {@link #onCapture}. */
  private final List<java.util.function.Consumer<LockRuntime>> listeners =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  /** Per ZooKeeper session: the send time of its last answered sync (the renewal after the next one uses it). */
  private final Map<Long, Long> lastAnswered = new ConcurrentHashMap<>();
  /** Per ZooKeeper session of a held Curator lock: when its next sync is due (System.nanoTime). */
  private final Map<Long, long[]> syncDue = new ConcurrentHashMap<>();
  /** Sends the syncs ({@link #syncLoop}); started with the first Curator lock captured. */
  private Thread syncer; // guarded by this
  /** Per etcd lease: {when it was last known alive, its TTL}, both in nanoseconds. */
  private final Map<Long, long[]> leases = new ConcurrentHashMap<>();
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

  public CapturedLocks(AgentConfig config, Scopes scopes) {
    this.config = config;
    this.scopes = scopes;
    this.marginNanos = config.captureSafetyMargin().toNanos();
    this.maxLocks = config.captureMaxLocks();
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
    Captured c = captured(library, where, path);
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
    Captured c = captured(library, where, path);
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
    Captured c = byIdentity.get(identity(library, where, path));
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
    Captured c = byIdentity.get(identity(library, where, path));
    ScopedGate routing = scopedGate;
    if (c != null && routing != null) {
      routing.unlead(c.runtime.policy());
    }
  }

  @Override
  public void granted(String library, String where, String path, String holdId, long token, long sessionId) {
    Captured c = captured(library, where, path);
    if (c == null) {
      return;
    }
    ensureScopedGate();
    long[] lease = leases.get(sessionId);
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
    Captured c = captured(library, where, path);
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
    long timeout = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    leases.merge(sessionId, new long[] {aliveAtNanos, timeout}, (a, b) -> b[0] - a[0] > 0 ? b : a);
    for (Hold h : holds.values()) {
      if (h.grant != null && h.sessionId == sessionId) {
        h.timeoutNanos = timeout;
        h.lock.runtime.state().renewed(h.grant, aliveAtNanos + timeout - marginNanos);
      }
    }
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

  /** A Curator lock of ZooKeeper session {@code sessionId} is held: syncs keep it trusted, the first one now. */
  private void keepSyncing(Captured c, long sessionId) {
    if (!"curator".equals(c.library)) {
      return;
    }
    syncDue.putIfAbsent(sessionId, new long[] {System.nanoTime()});
    Thread t;
    synchronized (this) {
      if (syncer == null) {
        syncer = AgentThreads.newThread(this::syncLoop, "fencing-agent-capture-sync");
        syncer.start();
      }
      t = syncer;
    }
    LockSupport.unpark(t);
  }

  /**
   * Every third of the session timeout, for each ZooKeeper session of a held Curator lock: a {@code sync} on the
   * application's handle ({@link LockLibraries#zooKeeperSync}), whose answer renews the session's locks
   * ({@link #alive}). A session none of whose locks is held any more is dropped.
   */
  private void syncLoop() {
    while (true) {
      long now = System.nanoTime();
      long next = now + TimeUnit.SECONDS.toNanos(1);
      for (Map.Entry<Long, long[]> e : syncDue.entrySet()) {
        long interval = syncInterval(e.getKey());
        if (interval <= 0) {
          syncDue.remove(e.getKey());
          continue;
        }
        long[] due = e.getValue();
        if (now - due[0] >= 0) {
          LockLibraries.zooKeeperSync(e.getKey()); // not sent (handle gone): no answer, the lock runs out of trust
          due[0] = now + interval;
        }
        next = due[0] - next < 0 ? due[0] : next;
      }
      LockSupport.parkNanos(Math.max(next - System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(1)));
    }
  }

  /** A third of the shortest session timeout of the locks held on {@code sessionId}; 0 when none is held. */
  private long syncInterval(long sessionId) {
    long shortest = 0;
    for (Hold h : holds.values()) {
      if (h.sessionId == sessionId && h.timeoutNanos > 0 && (shortest == 0 || h.timeoutNanos < shortest)) {
        shortest = h.timeoutNanos;
      }
    }
    return shortest / 3;
  }

  /**
   * A ZooKeeper follower forwards its clients' syncs to the leader, but tells the leader (whose clock expires
   * sessions) of its clients' activity only in its own next ping: what the leader surely heard of when a sync is
   * answered is the previous answered one. The deadline moves to that one's send time plus the session timeout minus
   * the margin, as for the agent's own ZooKeeper lease.
   */
  @Override
  public void alive(long sessionId, long aliveAtNanos, long timeoutMillis) {
    if (holds.isEmpty()) {
      lastAnswered.clear();
      return;
    }
    Long previous = lastAnswered.put(sessionId, aliveAtNanos);
    if (previous == null) {
      return;
    }
    for (Hold h : holds.values()) {
      if (h.grant != null && h.sessionId == sessionId) {
        if (timeoutMillis > 0) {
          h.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        }
        h.lock.runtime.state().renewed(h.grant, previous + h.timeoutNanos - marginNanos);
      }
    }
  }

  @Override
  public void sessionLost(long sessionId, String why) {
    leases.remove(sessionId);
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
    return new ArrayList<>(byIdentity.values());
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

  /** {@code pathName}, or when another captured lock has it already, {@link #disambiguated} (logged). */
  private String uniqueName(String pathName, String id, String library, String where, String path) {
    Captured other = byName.get(pathName);
    if (other == null) {
      return pathName;
    }
    String unique = disambiguated(pathName, id);
    LOG.warn(library + " lock " + path + " on " + where + " has the lock name '" + pathName + "' of " + other.library
        + " lock " + other.path + " on " + other.where + ": it is captured as lock '" + unique + "' (install its"
        + " fences for that name)");
    return unique;
  }

  private Captured captured(String library, String where, String path) {
    String id = identity(library, where, path);
    Captured known = byIdentity.get(id);
    if (known != null) {
      return known;
    }
    String pathName = lockName(path);
    if (pathName == null) {
      if (refused.add(String.valueOf(path))) {
        LOG.warn(library + " lock '" + path + "' is not captured: its name must have 1 to " + TokenGrammar.MAX_LOCK_LENGTH
            + " characters besides '/'");
      }
      return null;
    }
    synchronized (this) {
      Captured c = byIdentity.get(id);
      if (c != null) {
        return c;
      }
      if (byIdentity.size() >= maxLocks) {
        if (refused.add(id)) {
          LOG.warn(library + " lock '" + path + "' is not captured: fencing.capture.max-locks=" + maxLocks
              + " locks are captured already");
        }
        return null;
      }
      String name = uniqueName(pathName, id, library, where, path);
      TokenState state = TokenState.captured(name, config.tokenMax(), config.signingKey());
      // Counted under its own lock label (bounded by max-locks); a name that is also one of the configuration's
      // locks shares that lock's counters, so no label is exposed twice.
      boolean ownLabel = scopes.all().stream().noneMatch(r -> r.lock().equals(name));
      SideEffectCounters counters = ownLabel ? new SideEffectCounters() : scopes.outside().counters();
      FencingEvents events = new FencingEvents(name, config.logEventInterval());
      if (ownLabel) {
        scopes.rejections().addLock(name, events);
      }
      SideEffectPolicy policy = SideEffectPolicy.capturedLock(config, state, counters, events);
      LockRuntime runtime = new LockRuntime(name, state, counters, events, policy, false, false, List.of(),
          config.mode() == AgentConfig.Mode.OBSERVE);
      c = new Captured(library, where, path, runtime);
      byName.put(name, c);
      byIdentity.put(id, c);
      ensureScopedGate().addCaptured(name, policy); // its buffered Kafka records are judged by its own policy
      LOG.info("capturing " + library + " lock " + path + " as lock '" + name + "'");
      if (ownLabel) {
        for (java.util.function.Consumer<LockRuntime> l : listeners) {
          tell(l, runtime);
        }
      }
      return c;
    }
  }

  /**
   * {@code listener} is told of every lock captured with a metrics label of its own: those captured so far at once,
   * each later one when it is captured (on the capturing thread, once per lock).
   */
  public synchronized void onCapture(java.util.function.Consumer<LockRuntime> listener) {
    listeners.add(listener);
    for (Captured c : byName.values()) {
      if (c.runtime().counters() != scopes.outside().counters()) {
        tell(listener, c.runtime());
      }
    }
  }

  private static void tell(java.util.function.Consumer<LockRuntime> listener, LockRuntime runtime) {
    try {
      listener.accept(runtime);
    } catch (Throwable t) {
      LOG.warn("cannot expose the metrics of captured lock '" + runtime.lock() + "': " + AgentLog.describe(t));
    }
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
