package dev.fencing.faults;

/** {@code leader-kill}: SIGKILL of the coordinator's leader, restarted a moment later ({@link FaultCoordinator}). */
final class LeaderKillFault implements FaultKind {
  @Override
  public String inject(Trial trial) {
    return trial.coordinator().killLeader(trial.random());
  }
}
