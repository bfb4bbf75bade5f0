package dev.fencing.faults;

/**
 * {@code clock-jump}: worker w1's wall clock jumps minutes forward, then minutes back behind the real time, then
 * returns, seen by that worker's JVM only (libfaketime preloaded into it, driven through its control file:
 * {@link WorkerSlot#clockOffset}). w1 is the holder or a standby, as the run has it. The agent times its lease
 * with the monotonic clock and etcd keeps the lease's TTL, so its decisions must not change: a holder keeps holding
 * under the same token all along, a standby stays a standby. The harness polls its {@code /status} through the
 * jumps; any other state or token is a violation. (The workers print monotonic-derived times, so the checker's
 * real-time rule keeps one clock.)
 */
final class ClockJumpFault implements FaultKind {
  @Override
  public String inject(Trial trial) {
    WorkerSlot slot = trial.skewable();
    trial.holder(); // a settled lock: the last fault's successor has taken over
    WorkerSlot.Status before = slot.status();
    long forward = 60 + trial.random().nextInt(540);
    long back = -(60 + trial.random().nextInt(540));
    long hold = trial.ttlMs() + trial.random().nextInt(1_000);
    StringBuilder seen = new StringBuilder();
    try {
      slot.clockOffset(forward);
      watch(trial, slot, before, hold, "+" + forward + " s", seen);
      slot.clockOffset(back);
      watch(trial, slot, before, hold, back + " s", seen);
    } finally {
      slot.clockOffset(0);
    }
    watch(trial, slot, before, 1_000, "back to the real time", seen);
    String role = before.holding() ? "holder, token " + before.token() : "standby, " + before.state();
    return "jumped " + before.worker() + "'s (" + role + ") wall clock " + forward + " s forward, then to " + back
        + " s, " + hold + " ms each: " + (seen.isEmpty() ? "its state and token did not change" : seen);
  }

  /** Polls the worker's status for {@code ms}: a holder must hold the same token, a standby must not hold. */
  private static void watch(Trial trial, WorkerSlot slot, WorkerSlot.Status before, long ms, String phase,
      StringBuilder seen) {
    if (!seen.isEmpty()) {
      return;
    }
    long end = System.nanoTime() + ms * 1_000_000;
    while (System.nanoTime() < end) {
      WorkerSlot.Status now = slot.status();
      boolean changed = before.holding() ? !now.holding() || now.token() != before.token() : now.holding();
      if (now.state() != null && changed) {
        String what = before.worker() + " went from " + before.state() + " token " + before.token() + " to "
            + now.state() + " token " + now.token() + (now.reused() ? " (reused)" : "") + " with its wall clock at "
            + phase;
        seen.append(what);
        trial.violation("clock-jump: " + what + ": the agent's decision changed with the wall clock");
        return;
      }
      FaultKind.sleep(100);
    }
  }
}
