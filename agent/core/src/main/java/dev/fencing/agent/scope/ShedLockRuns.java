package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.ShedLockNotFencedException;
import dev.fencing.agent.bootstrap.ShedLocks;
import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.scope.CapturedLocks.Captured;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * ShedLock's tasks as scopes of the agent's locks (docs/DESIGN.md section 4, "ShedLock"). When ShedLock holds its lock
 * {@code X} and the task starts, the agent campaigns for its own lock {@code X} (a lease of its own in etcd or
 * ZooKeeper, {@link Campaign}), waits for it at most {@code fencing.shedlock.wait}, and runs the task in X's scope with
 * X's token; when the task ends it gives X back, before ShedLock unlocks. The agent campaigns only while ShedLock holds
 * its lock, so the replica that runs the task is the one that holds X: a paused holder whose lease lapsed is
 * out-tokened by the replica whose ShedLock lock came after {@code lockAtMostFor}. A task the agent cannot take X for
 * fails ({@link ShedLockNotFencedException}, logged, counted) instead of running unfenced; observe mode runs it all the
 * same.
 */
public final class ShedLockRuns implements ShedLocks.Hook {
  private static final AgentLog LOG = AgentLog.get(ShedLockRuns.class);
  static final String LIBRARY = "shedlock";
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** Starts campaigning for a lock with a lease of its own; closing it gives the lease back. */
  public interface Campaign {
    AutoCloseable start(LockRuntime lock) throws Exception;
  }

  private final CapturedLocks captured;
  private final Campaign campaign;
  private final String where;
  private final long waitNanos;
  private final boolean observe;
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

  /** {@code where}: the agent's coordinator, part of each lock's identity (see {@code CaptureHook}). */
  public ShedLockRuns(AgentConfig config, CapturedLocks captured, String where, Campaign campaign) {
    this.captured = captured;
    this.campaign = campaign;
    this.where = where;
    this.waitNanos = config.shedLockWait().toNanos();
    this.observe = config.mode() == AgentConfig.Mode.OBSERVE;
  }

  /** Tasks refused because the agent's lock was not taken in time. */
  public long refusedCount() {
    return refused.sum();
  }

  @Override
  public Object enter(String name) {
    Captured c = captured.campaigned(LIBRARY, where, name);
    if (c == null) {
      return refuse(name, null, "the lock cannot be captured (see the log line above)");
    }
    LockRuntime r = c.runtime();
    try {
      start(c);
    } catch (Exception e) {
      return refuse(name, c, "the campaign did not start: " + AgentLog.describe(e));
    }
    long start = System.nanoTime();
    while (!r.holding()) {
      if (System.nanoTime() - start >= waitNanos) {
        stop(c);
        return refuse(name, c, "not held within fencing.shedlock.wait=" + TimeUnit.NANOSECONDS.toMillis(waitNanos)
            + " ms (" + r.state().view().phaseAt(r.state().now()) + "): another replica may still hold it");
      }
      try {
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(POLL_NANOS));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        stop(c);
        return refuse(name, c, "interrupted while waiting for it");
      }
    }
    LOG.debug("ShedLock task '" + name + "' runs in the scope of lock '" + r.lock() + "', token "
        + r.state().view().grant().token());
    return new Run(c, TokenContext.enterScope(c.scope));
  }

  @Override
  public void exit(Object entered) {
    if (!(entered instanceof Run)) {
      return;
    }
    Run run = (Run) entered;
    TokenContext.exitScope(run.previous);
    stop(run.lock);
  }

  private Object refuse(String name, Captured c, String why) {
    String lock = c == null ? name : c.runtime().lock();
    if (observe) {
      LOG.warn("ShedLock task '" + name + "': the agent's lock '" + lock + "' " + why
          + "; observe mode runs it all the same");
      if (c == null) {
        return null;
      }
      synchronized (active) {
        active.computeIfAbsent(lock, k -> new Active(() -> {})).runs++;
      }
      return new Run(c, TokenContext.enterScope(c.scope));
    }
    refused.increment();
    String message = "fencing agent: ShedLock task '" + name + "' not run: the agent's lock '" + lock + "' " + why;
    LOG.warn(message);
    throw new ShedLockNotFencedException(message);
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
