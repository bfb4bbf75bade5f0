package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.ShedLockNotFencedException;
import dev.fencing.agent.bootstrap.ShedLocks;
import dev.fencing.agent.config.AgentConfig;

/**
 * ShedLock's tasks as scopes of the agent's locks (docs/DESIGN.md section 4, "ShedLock"). When ShedLock holds its lock
 * {@code X} and the task starts, the agent campaigns for its own lock {@code X} (a lease of its own in etcd or
 * ZooKeeper, {@link Campaign}), waits for it at most {@code fencing.shedlock.wait}, and runs the task in X's scope with
 * X's token; when the task ends it gives X back, before ShedLock unlocks. The agent campaigns only while ShedLock holds
 * its lock, so the replica that runs the task is the one that holds X: a paused holder whose lease lapsed is
 * out-tokened by the replica whose ShedLock lock came after {@code lockAtMostFor}. A task the agent cannot take X for
 * fails ({@link ShedLockNotFencedException}, logged, counted) instead of running unfenced; observe mode runs it all the
 * same ({@link CampaignRuns}).
 */
public final class ShedLockRuns implements ShedLocks.Hook {
  static final String LIBRARY = "shedlock";

  /** Starts campaigning for a lock with a lease of its own; closing it gives the lease back. */
  public interface Campaign extends CampaignRuns.Campaign {}

  private final CampaignRuns runs;

  /** {@code where}: the agent's coordinator, part of each lock's identity (see {@code CaptureHook}). */
  public ShedLockRuns(AgentConfig config, CapturedLocks captured, String where, Campaign campaign) {
    this.runs = new CampaignRuns(captured, where, campaign, LIBRARY, config.shedLockWait(), "fencing.shedlock.wait",
        config.mode() == AgentConfig.Mode.OBSERVE, ShedLockNotFencedException::new);
  }

  /** Tasks refused because the agent's lock was not taken in time. */
  public long refusedCount() {
    return runs.refusedCount();
  }

  @Override
  public Object enter(String name) {
    return runs.enter(name, "ShedLock task '" + name + "'");
  }

  @Override
  public void exit(Object entered) {
    runs.exit(entered);
  }
}
