package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.scope.CapturedLocks.Captured;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Runs of a scheduler's task as scopes of an agent lock taken on entry (docs/DESIGN.md section 4, "ShedLock" and
 * "Quartz"): when the task starts, the agent campaigns for the lock (a lease of its own in etcd or ZooKeeper,
 * {@link Campaign}), waits for it at most a bound, and runs the task in the lock's scope with its token; when the task
 * ends it gives the lock back. A task the agent cannot take the lock for fails (the exception {@code refusal} makes,
 * logged, counted) instead of running unfenced; observe mode runs it all the same. Concurrent or nested runs of one
 * lock in a JVM share one campaign.
 */
public final class CampaignRuns {
  private static final AgentLog LOG = AgentLog.get(CampaignRuns.class);
  private static final long POLL_MILLIS = 10;

  /** Starts campaigning for a lock with a lease of its own; closing it gives the lease back. */
  public interface Campaign {
    AutoCloseable start(LockRuntime lock) throws Exception;
  }

  private final CapturedLocks captured;
  private final Campaign campaign;
  private final String where;
  private final String library;
  private final long waitNanos;
  private final String waitKey;
  private final boolean observe;
  private final Function<String, RuntimeException> refusal;
  private final LongAdder refused = new LongAdder();
  /** The campaigns running, by lock name, with how many runs of this JVM use each (a nested or overlapping run). */
  private final Map<String, Active> active = new HashMap<>();

  private static final class Active {
    final AutoCloseable campaign;
    int runs;

    Active(AutoCloseable campaign) {
      this.campaign = campaign;
    }
  }

  /** One run in a lock's scope: what {@link #exit} undoes. */
  private static final class Run {
    final Captured lock;
    final Object previous;

    Run(Captured lock, Object previous) {
      this.lock = lock;
      this.previous = previous;
    }
  }

  /**
   * {@code where}: the agent's coordinator, part of each lock's identity (see {@code CaptureHook}); {@code library}:
   * the captured locks' library label; {@code waitKey}: the setting that gave {@code wait}, named when it ran out;
   * {@code refusal}: the exception a refused task fails with, from its message.
   */
  CampaignRuns(CapturedLocks captured, String where, Campaign campaign, String library, Duration wait, String waitKey,
      boolean observe, Function<String, RuntimeException> refusal) {
    this.captured = captured;
    this.campaign = campaign;
    this.where = where;
    this.library = library;
    this.waitNanos = wait.toNanos();
    this.waitKey = waitKey;
    this.observe = observe;
    this.refusal = refusal;
  }

  /** Tasks refused because the agent's lock was not taken in time. */
  long refusedCount() {
    return refused.sum();
  }

  /** The task {@code what} (for the log) starts: takes lock {@code name} and enters its scope, or throws. */
  Object enter(String name, String what) {
    Captured c = captured.campaigned(library, where, name);
    if (c == null) {
      return refuse(what, name, null, "the lock cannot be captured (see the log line above)");
    }
    LockRuntime r = c.runtime();
    try {
      start(c);
    } catch (Exception e) {
      return refuse(what, name, c, "the campaign did not start: " + AgentLog.describe(e));
    }
    long start = System.nanoTime();
    while (!r.holding()) {
      if (System.nanoTime() - start >= waitNanos) {
        stop(c);
        return refuse(what, name, c, "not held within " + waitKey + "=" + TimeUnit.NANOSECONDS.toMillis(waitNanos)
            + " ms (" + r.state().view().phaseAt(r.state().now()) + "): another replica may still hold it");
      }
      try {
        Thread.sleep(POLL_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        stop(c);
        return refuse(what, name, c, "interrupted while waiting for it");
      }
    }
    LOG.debug(what + " runs in the scope of lock '" + r.lock() + "', token " + r.state().view().grant().token());
    return new Run(c, TokenContext.enterScope(c.scope));
  }

  void exit(Object entered) {
    if (!(entered instanceof Run)) {
      return;
    }
    Run run = (Run) entered;
    TokenContext.exitScope(run.previous);
    stop(run.lock);
  }

  private Object refuse(String what, String name, Captured c, String why) {
    String lock = c == null ? name : c.runtime().lock();
    if (observe) {
      LOG.warn(what + ": the agent's lock '" + lock + "' " + why + "; observe mode runs it all the same");
      if (c == null) {
        return null;
      }
      synchronized (active) {
        active.computeIfAbsent(lock, k -> new Active(() -> {})).runs++;
      }
      return new Run(c, TokenContext.enterScope(c.scope));
    }
    refused.increment();
    String message = "fencing agent: " + what + " not run: the agent's lock '" + lock + "' " + why;
    LOG.warn(message);
    throw refusal.apply(message);
  }

  private void start(Captured c) throws Exception {
    String lock = c.runtime().lock();
    synchronized (active) {
      Active a = active.get(lock);
      if (a == null) {
        a = new Active(campaign.start(c.runtime()));
        active.put(lock, a);
      }
      a.runs++;
    }
  }

  private void stop(Captured c) {
    AutoCloseable toClose = null;
    synchronized (active) {
      Active a = active.get(c.runtime().lock());
      if (a != null && --a.runs <= 0) {
        active.remove(c.runtime().lock());
        toClose = a.campaign;
      }
    }
    if (toClose != null) {
      try {
        toClose.close();
      } catch (Exception e) {
        LOG.warn("lock '" + c.runtime().lock() + "': giving the lease back failed: " + AgentLog.describe(e));
      }
    }
  }
}
