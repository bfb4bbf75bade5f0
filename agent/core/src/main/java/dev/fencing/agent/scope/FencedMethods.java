package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.FencingApi;
import dev.fencing.agent.bootstrap.LockScope;
import dev.fencing.agent.bootstrap.Sections;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.protocol.TokenGrammar;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Methods annotated {@code @Fenced("<lock>")} with the application's optional API (docs/DESIGN.md section 4, "The
 * application API"): each is a section of its lock, entered and decided as a declared one ({@link Sections}). A lock
 * of the configuration (the JVM-wide lock, a lock of {@code fencing.sections}) keeps its runtime; any other lock is
 * campaigned for from the moment the first method annotated with it is defined, with a lease of its own kept until the
 * JVM exits, and is registered as a captured lock (library {@code fenced}: its lock label, {@code /status}
 * {@code captured}, {@code fencing.capture.max-locks}). Without a lease ({@code fencing.lease.enabled=false}) the
 * annotation does nothing, as declared sections do nothing then.
 */
public final class FencedMethods implements FencingApi.Hook {
  private static final AgentLog LOG = AgentLog.get(FencedMethods.class);
  static final String LIBRARY = "fenced";

  private final AgentConfig config;
  private final Scopes scopes;
  private final String where;
  private final ShedLockRuns.Campaign campaign;
  /** Each annotated lock's scope, once resolved. */
  private final Map<String, LockScope> byLock = new ConcurrentHashMap<>();
  private final Set<String> refused = ConcurrentHashMap.newKeySet();

  /**
   * {@code where}: the agent's coordinator, part of each lock's identity; {@code campaign}: starts the lease of a lock
   * the configuration does not name (kept until the JVM exits).
   */
  public FencedMethods(AgentConfig config, Scopes scopes, String where, ShedLockRuns.Campaign campaign) {
    this.config = config;
    this.scopes = scopes;
    this.where = where;
    this.campaign = campaign;
  }

  @Override
  public void fenced(String origin, String lock) {
    if (!config.leaseEnabled() || Sections.scopeOf(origin) != null) {
      return; // no lease: no sections; already a section (of the configuration, or reported before)
    }
    if (!TokenGrammar.validLock(lock)) {
      if (refused.add(origin)) {
        LOG.warn("@Fenced(\"" + lock + "\") on " + origin + " is ignored: a lock name has 1 to "
            + TokenGrammar.MAX_LOCK_LENGTH + " of [A-Za-z0-9._-]; the method runs unfenced");
      }
      return;
    }
    LockScope scope = scopeOf(lock);
    if (scope == null) {
      if (refused.add(origin)) {
        LOG.warn("@Fenced(\"" + lock + "\") on " + origin + " is ignored: the lock cannot be taken (see above)");
      }
      return;
    }
    Sections.add(origin, scope);
    LOG.debug("section " + origin + " of lock '" + scope.lock() + "' (@Fenced)");
  }

  private LockScope scopeOf(String lock) {
    LockScope known = byLock.get(lock);
    if (known != null) {
      return known;
    }
    synchronized (this) {
      known = byLock.get(lock);
      if (known != null) {
        return known;
      }
      for (LockRuntime r : scopes.locks()) {
        if (r.lock().equals(lock)) {
          byLock.put(lock, r.scope());
          return r.scope();
        }
      }
      CapturedLocks.Captured c = scopes.captured().campaigned(LIBRARY, where, lock);
      if (c == null) {
        return null;
      }
      LockRuntime r = c.runtime();
      if (!config.valid()) {
        r.state().failed("invalid configuration: " + String.join("; ", config.problems()));
      } else {
        try {
          campaign.start(r);
          LOG.info("started: lock '" + r.lock() + "' (@Fenced sections), lease ttl " + config.leaseTtl().toSeconds()
              + "s");
        } catch (Exception e) {
          r.state().failed("the campaign did not start: " + AgentLog.describe(e));
          LOG.warn("lock '" + r.lock() + "' (@Fenced): the campaign did not start: " + AgentLog.describe(e));
        }
      }
      byLock.put(lock, r.scope());
      return r.scope();
    }
  }
}
