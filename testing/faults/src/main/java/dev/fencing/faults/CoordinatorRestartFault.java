package dev.fencing.faults;

/**
 * {@code etcd-restart} / {@code zk-restart}: every node of the coordinator stopped, then started again
 * ({@link FaultCoordinator}).
 */
final class CoordinatorRestartFault implements FaultKind {
  @Override
  public String inject(Trial trial) {
    return trial.coordinator().restartAll(trial.random());
  }
}
