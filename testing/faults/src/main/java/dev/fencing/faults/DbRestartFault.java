package dev.fencing.faults;

/**
 * {@code db-restart}: PostgreSQL (immediate shutdown: every backend ended at once, WAL replayed at the start) or
 * MariaDB (SIGKILL, InnoDB recovery at the start), at random, at a random point of the workers' loops (the pg
 * transaction sleeps 20 ms between its UPDATE and INSERT, so one is often open), started again after 0.5-2 s. An
 * acknowledged commit must survive (the run's PostgreSQL commits synchronously), an open transaction's effects
 * must go together, and the fence's highest token is durable with the data.
 */
final class DbRestartFault implements FaultKind {
  @Override
  public String inject(Trial trial) {
    boolean pg = trial.random().nextBoolean();
    FaultKind.sleep(trial.random().nextInt(100));
    long down = 500 + trial.random().nextInt(1_500);
    if (pg) {
      trial.postgres().crash();
      FaultKind.sleep(down);
      trial.postgres().restart();
    } else {
      trial.maria().kill();
      FaultKind.sleep(down);
      trial.maria().restart();
    }
    return (pg ? "crashed PostgreSQL (immediate stop)" : "killed MariaDB") + ", restarted after " + down + " ms";
  }
}
