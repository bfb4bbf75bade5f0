package dev.fencing.agent.scope;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.events.FencingEvents;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.policy.SideEffectPolicy;
import dev.fencing.agent.scope.CapturedLocks.Captured;
import dev.fencing.agent.token.HighestTokenStore;
import dev.fencing.agent.token.TokenState;
import dev.fencing.protocol.TokenGrammar;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The application locks captured so far, each distinct lock (library, coordinator, path:
 * {@link CapturedLocks#identity}) once: on its first acquisition it gets a lock runtime of its own (token state, policy, counters, events) under a
 * lock name of its own ({@link CapturedLocks#lockName}, {@link CapturedLocks#disambiguated} when another lock has
 * that name), at most {@code fencing.capture.max-locks} of them; the metrics are told of each.
 */
final class CapturedLockRegistry {
  /** The capture hook's log: its lines keep the hook's name. */
  private static final AgentLog LOG = AgentLog.get(CapturedLocks.class);

  private final AgentConfig config;
  private final Scopes scopes;
  private final int maxLocks;
  /** The routing gate, installed at the first capture: each lock's buffered Kafka records are judged by its policy. */
  private final Supplier<ScopedGate> gate;
  /** Each captured lock by its identity. */
  private final Map<String, Captured> byIdentity = new ConcurrentHashMap<>();
  /** The lock names in use (a name is each lock's own: two identities never share one). */
  private final Map<String, Captured> byName = new ConcurrentHashMap<>();
  private final Set<String> refused = ConcurrentHashMap.newKeySet();
  /** Told of each lock captured, with its own counters (the metrics add its series); see {@link #onCapture}. */
  private final List<Consumer<LockRuntime>> listeners = new CopyOnWriteArrayList<>();

  CapturedLockRegistry(AgentConfig config, Scopes scopes, Supplier<ScopedGate> gate) {
    this.config = config;
    this.scopes = scopes;
    this.maxLocks = config.captureMaxLocks();
    this.gate = gate;
  }

  /** The lock captured as this identity, or null when it has not been. */
  Captured get(String library, String where, String path) {
    return byIdentity.get(CapturedLocks.identity(library, where, path));
  }

  /** The captured locks, in no particular order. */
  List<Captured> locks() {
    return new ArrayList<>(byIdentity.values());
  }

  /** {@code pathName}, or when another captured lock has it already, {@link CapturedLocks#disambiguated} (logged). */
  private String uniqueName(String pathName, String id, String library, String where, String path) {
    Captured other = byName.get(pathName);
    if (other == null) {
      return pathName;
    }
    String unique = CapturedLocks.disambiguated(pathName, id);
    LOG.warn(library + " lock " + path + " on " + where + " has the lock name '" + pathName + "' of " + other.library
        + " lock " + other.path + " on " + other.where + ": it is captured as lock '" + unique + "' (install its"
        + " fences for that name)");
    return unique;
  }

  /**
   * The lock of this identity, captured now if it is met for the first time; null when it cannot be (a path without
   * a lock name, or {@code fencing.capture.max-locks} reached), logged once.
   */
  Captured captured(String library, String where, String path) {
    return captured(library, where, path, false);
  }

  /**
   * As {@link #captured(String, String, String)}; {@code campaigns}: a lock the agent itself campaigns for in its
   * coordinator (a ShedLock task's), whose token state keeps the highest token in {@code fencing.state.dir} as a
   * declared lock's does.
   */
  Captured captured(String library, String where, String path, boolean campaigns) {
    String id = CapturedLocks.identity(library, where, path);
    Captured known = byIdentity.get(id);
    if (known != null) {
      return known;
    }
    String pathName = CapturedLocks.lockName(path);
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
      TokenState state = campaigns
          ? new TokenState(name, config.tokenMax(), HighestTokenStore.in(config.stateDir(), name), config.signingKey())
          : TokenState.captured(name, config.tokenMax(), config.signingKey());
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
      gate.get().addCaptured(name, policy); // its buffered Kafka records are judged by its own policy
      LOG.info("capturing " + library + " lock " + path + " as lock '" + name + "'");
      if (ownLabel) {
        for (Consumer<LockRuntime> l : listeners) {
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
  synchronized void onCapture(Consumer<LockRuntime> listener) {
    listeners.add(listener);
    for (Captured c : byName.values()) {
      if (c.runtime().counters() != scopes.outside().counters()) {
        tell(listener, c.runtime());
      }
    }
  }

  private static void tell(Consumer<LockRuntime> listener, LockRuntime runtime) {
    try {
      listener.accept(runtime);
    } catch (Throwable t) {
      LOG.warn("cannot expose the metrics of captured lock '" + runtime.lock() + "': " + AgentLog.describe(t));
    }
  }
}
