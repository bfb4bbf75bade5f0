package dev.fencing.agent.token;

import dev.fencing.agent.log.AgentLog;
import dev.fencing.protocol.TokenSignature;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The one place that knows whether this JVM holds a valid lease, and with which token.
 *
 * <p>Transitions: STARTING → STANDBY → HOLDING → EXPIRED or LOST → HOLDING (new grant) …; FAILED from STARTING or
 * STANDBY. Writers (the lease keeper) serialise on this object; readers take the volatile {@link TokenView} and apply
 * the local deadline at read time, so a process resumed after a pause sees EXPIRED on its very first read, before any
 * thread of the agent has run. Reading takes no lock and allocates nothing.
 *
 * <p>The guard: a grant whose token is not above the highest token seen for the lock, or that comes from a different
 * etcd cluster, is token reuse; a token above {@code fencing.token.max} is an overflow. Both are counted and kept on
 * the grant, and the policy blocks on them.
 */
public final class TokenState {
  private static final AgentLog LOG = AgentLog.get(TokenState.class);

  private final String lock;
  private final long tokenMax;
  private final HighestTokenStore store;
  private final LongSupplier clock;
  private final TokenSignature signer;
  /** False for an application's lock the agent captured: the agent does not campaign for it after a loss. */
  private final boolean campaigns;
  private volatile TokenView view;

  private long highestSeen;
  private long knownClusterId;

  private final LongAdder acquisitions = new LongAdder();
  private final LongAdder reuse = new LongAdder();
  private final LongAdder overflow = new LongAdder();
  private final Map<LossReason, LongAdder> losses = new EnumMap<>(LossReason.class);

  /** The JVM's monotonic clock; a class of its own rather than a method reference, which premain would spin. */
  private static final class NanoTime implements LongSupplier {
    static final LongSupplier CLOCK = new NanoTime();

    @Override
    public long getAsLong() {
      return System.nanoTime();
    }
  }

  public TokenState(String lock, long tokenMax, HighestTokenStore store) {
    this(lock, tokenMax, store, NanoTime.CLOCK, null);
  }

  /** With {@code signer} (fencing.signing.key-file), each grant carries the signature of (lock, token). */
  public TokenState(String lock, long tokenMax, HighestTokenStore store, TokenSignature signer) {
    this(lock, tokenMax, store, NanoTime.CLOCK, signer);
  }

  TokenState(String lock, long tokenMax, HighestTokenStore store, LongSupplier clock) {
    this(lock, tokenMax, store, clock, null);
  }

  TokenState(String lock, long tokenMax, HighestTokenStore store, LongSupplier clock, TokenSignature signer) {
    this(lock, tokenMax, store, clock, signer, true);
  }

  /**
   * The state of an application's own lock the agent captured (Curator, jetcd): granted and ended by the application's
   * acquisitions and releases, never campaigned for by the agent.
   */
  public static TokenState captured(String lock, long tokenMax, TokenSignature signer) {
    return new TokenState(lock, tokenMax, HighestTokenStore.none(), NanoTime.CLOCK, signer, false);
  }

  private TokenState(String lock, long tokenMax, HighestTokenStore store, LongSupplier clock, TokenSignature signer,
      boolean campaigns) {
    this.campaigns = campaigns;
    this.signer = signer;
    this.lock = lock;
    this.tokenMax = tokenMax;
    this.store = store;
    this.clock = clock;
    for (LossReason r : LossReason.values()) {
      losses.put(r, new LongAdder());
    }
    this.view = new TokenView(LeasePhase.STARTING, null, null, "connecting to etcd");
  }

  /** Loads the highest token seen in earlier runs (fencing.state.dir); call off the premain path. */
  public synchronized void loadPersisted() {
    HighestTokenStore.Record r = store.load();
    if (r != null) {
      highestSeen = Math.max(highestSeen, r.token);
      if (knownClusterId == 0) {
        knownClusterId = r.clusterId;
      }
    }
  }

  public String lock() {
    return lock;
  }

  public long tokenMax() {
    return tokenMax;
  }

  /** The current snapshot (lock-free). */
  public TokenView view() {
    return view;
  }

  /** The phase now, with the local deadline applied (lock-free). */
  public LeasePhase phase() {
    return view.phaseAt(clock.getAsLong());
  }

  public long now() {
    return clock.getAsLong();
  }

  public synchronized long highestSeen() {
    return highestSeen;
  }

  // ---- transitions (called by the lease keeper) ----

  /** Connected to etcd and campaigning. Only from STARTING or FAILED: after a loss the phase keeps saying so. */
  public synchronized void standby(String detail) {
    LeasePhase p = view.storedPhase();
    if (p == LeasePhase.STARTING || p == LeasePhase.FAILED || p == LeasePhase.STANDBY) {
      set(new TokenView(LeasePhase.STANDBY, view.grant(), view.lastLoss(), detail));
    }
  }

  /** Misconfigured, or etcd unreachable before any lease. Never replaces a lease (held or lost). */
  public synchronized void failed(String detail) {
    LeasePhase p = view.storedPhase();
    if (p == LeasePhase.STARTING || p == LeasePhase.STANDBY || p == LeasePhase.FAILED) {
      set(new TokenView(LeasePhase.FAILED, null, null, detail));
    }
  }

  /**
   * etcd failed between leases. Before this JVM ever reached etcd that is an agent failure (FAILED, and
   * fencing.fail-mode decides); once it has campaigned, a standby stays STANDBY: fail-mode=open is for an agent that
   * cannot work at all, not a licence for a standby to write untagged while another JVM holds the lock. A lease held
   * or lost keeps its phase (the loss says what happened).
   */
  public synchronized void unreachable(String detail) {
    LeasePhase p = view.storedPhase();
    if (p == LeasePhase.STARTING || p == LeasePhase.FAILED) {
      set(new TokenView(LeasePhase.FAILED, null, null, detail));
    } else if (p == LeasePhase.STANDBY) {
      set(new TokenView(LeasePhase.STANDBY, view.grant(), view.lastLoss(), detail + "; still campaigning"));
    }
  }

  /** The lock was acquired with {@code token}; returns the grant that later renewals and losses refer to. */
  public synchronized Grant granted(long token, long leaseId, long clusterId, long deadlineNanos) {
    boolean reused = token <= highestSeen || (knownClusterId != 0 && clusterId != 0 && clusterId != knownClusterId);
    boolean over = token > tokenMax;
    if (reused) {
      reuse.increment();
      LOG.error("token reuse on lock '" + lock + "': granted token " + token + " (etcd cluster " + Long.toHexString(clusterId)
          + ") is not above the highest token seen, " + highestSeen + " (cluster " + Long.toHexString(knownClusterId)
          + "): etcd lost or restored data; side effects are blocked until a token above " + highestSeen);
    }
    if (over) {
      overflow.increment();
      LOG.error("token overflow on lock '" + lock + "': token " + token + " is above fencing.token.max=" + tokenMax
          + "; side effects are blocked");
    }
    highestSeen = Math.max(highestSeen, token);
    if (clusterId != 0) {
      knownClusterId = clusterId;
    }
    store.save(new HighestTokenStore.Record(highestSeen, knownClusterId));
    // Signed here, on the lease keeper's thread, once per grant: side effects only read it.
    String signature = signer == null ? null : signer.sign(lock, token);
    Grant g = new Grant(lock, token, leaseId, clusterId, reused, over, clock.getAsLong(), deadlineNanos, signature);
    acquisitions.increment();
    set(new TokenView(LeasePhase.HOLDING, g, view.lastLoss(), null));
    notifyAll();
    return g;
  }

  /**
   * A keepalive sent at some time was acknowledged: move the deadline of {@code grant} forward. Ignored when the grant
   * is no longer current or its deadline already passed: an expired grant never comes back.
   */
  public synchronized void renewed(Grant grant, long newDeadlineNanos) {
    TokenView v = view;
    if (v.grant() == grant && v.storedPhase() == LeasePhase.HOLDING && grant.validAt(clock.getAsLong())) {
      grant.extendDeadline(newDeadlineNanos);
    }
  }

  /**
   * {@code grant} is gone: EXPIRED for local-deadline reasons, LOST when etcd said so. Counted once per grant.
   * Returns false when the grant was not the current held one.
   */
  public synchronized boolean lost(Grant grant, LossReason reason) {
    TokenView v = view;
    if (v.grant() != grant || v.storedPhase() != LeasePhase.HOLDING) {
      return false;
    }
    boolean local = reason == LossReason.DEADLINE_PASSED || reason == LossReason.KEEPALIVE_FAILED;
    losses.get(reason).increment();
    set(new TokenView(local ? LeasePhase.EXPIRED : LeasePhase.LOST, grant, reason, null));
    LOG.warn("lease on lock '" + lock + "' " + (local ? "expired" : "lost") + " (" + reason.label() + "), token "
        + grant.token() + (campaigns ? "; campaigning again" : "; the application's lock is no longer trusted"));
    return true;
  }

  /**
   * The lease was given up on purpose ({@code why}: JVM shutdown, a reused grant): no longer holding, not counted as a
   * loss. The grant stays in the view, so /status still shows its token and whether it was reused.
   */
  public synchronized void released(Grant grant, String why) {
    TokenView v = view;
    if (v.grant() == grant && v.storedPhase() == LeasePhase.HOLDING) {
      set(new TokenView(LeasePhase.LOST, grant, v.lastLoss(), why));
    }
  }

  /**
   * An application's lock the agent captures was acquired, but the agent could not verify the acquisition
   * ({@code detail}: its node or key is gone, belongs to another session, or could not be read): no grant, no token,
   * LOST until the next verified grant. Not counted as a loss (no lease of this JVM's ended) nor as an acquisition.
   */
  public synchronized void unverified(String detail) {
    set(new TokenView(LeasePhase.LOST, null, view.lastLoss(), detail));
  }

  /**
   * Waits (on the slow path only) until the phase is HOLDING with a valid grant, at most {@code timeoutNanos}.
   * Returns whether it is.
   */
  public boolean awaitHolding(long timeoutNanos) throws InterruptedException {
    long end = clock.getAsLong() + timeoutNanos;
    synchronized (this) {
      while (phase() != LeasePhase.HOLDING) {
        long left = end - clock.getAsLong();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
      }
      return true;
    }
  }

  private void set(TokenView v) {
    view = v;
  }

  // ---- counters (read by metrics and status) ----

  public long acquisitions() {
    return acquisitions.sum();
  }

  public long reuseCount() {
    return reuse.sum();
  }

  public long overflowCount() {
    return overflow.sum();
  }

  public long losses(LossReason reason) {
    return losses.get(reason).sum();
  }
}
