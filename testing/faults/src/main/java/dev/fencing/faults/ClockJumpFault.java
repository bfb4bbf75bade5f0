package dev.fencing.faults;

/**
 * {@code clock-jump}: worker w1's wall clock jumps minutes forward, then minutes back behind the real time, then
 * returns, seen by that worker's JVM only (libfaketime preloaded into it, driven through its control file:
 * {@link WorkerSlot#clockOffset}). If w1 is a standby, the other workers are first frozen until it holds the lock.
 * The agent times its lease with the monotonic clock and etcd keeps the lease's TTL, so its decisions must not
 * change: the holder keeps holding under the same token all along (if w1 did not hold when the jump began, the
 * trial is not judged: its line says so). The harness polls its {@code /status} through the
 * jumps; any other state or token is a violation. With a captured lock ({@code --work=curator|jetcd|leader}) it is
 * reported, not judged: whether the application still holds its lock is its client's to say (jetcd ends a lease's
 * keepalive by the wall clock), and the history checker judges what the holder wrote. (The workers print monotonic-derived times, so the checker's
 * real-time rule keeps one clock.)
 */
final class ClockJumpFault implements FaultKind {
  @Override
  public String inject(Trial trial) {
    WorkerSlot slot = trial.skewable();
    WorkerSlot.Status h = trial.holder(); // a settled lock: the last fault's successor has taken over
    String handover = h == null || h.worker().equals(slot.current().name()) ? "" : handOver(trial, slot, h);
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
    return handover + "jumped " + before.worker() + "'s (" + role + ") wall clock " + forward + " s forward, then to " + back
        + " s, " + hold + " ms each: " + (!before.holding() ? "not judged (it did not hold)"
        : seen.isEmpty() ? "it held token " + before.token() + " throughout" : seen);
  }

  /**
   * Makes w1 the holder, so that the jump hits a holder's decisions: the other workers are frozen until w1 took
   * the lock (the holder's lease expires after the TTL), then resumed (the old holder finds its lease expired).
   */
  private static String handOver(Trial trial, WorkerSlot slot, WorkerSlot.Status holder) {
    java.util.List<WorkerSlot> others = trial.slots().stream().filter(s -> s != slot).toList();
    others.forEach(s -> s.current().jvm().suspend());
    WorkerSlot.Status now = null;
    try {
      long end = System.nanoTime() + 30_000_000_000L;
      while (System.nanoTime() < end) {
        now = slot.status();
        if (now.holding()) {
          break;
        }
        FaultKind.sleep(50);
      }
    } finally {
      others.forEach(s -> s.current().jvm().resume());
    }
    FaultKind.sleep(500);
    return now != null && now.holding() ? "froze the others until " + now.worker() + " held token " + now.token()
        + " (from " + holder.worker() + "'s " + holder.token() + "); " : "w1 did not take the lock; ";
  }

  /** Polls the worker's status for {@code ms}: a holder must hold the same token (a standby is not judged). */
  private static void watch(Trial trial, WorkerSlot slot, WorkerSlot.Status before, long ms, String phase,
      StringBuilder seen) {
    if (!seen.isEmpty() || !before.holding()) {
      return;
    }
    boolean judged = trial.agentsOwnLock();
    long end = System.nanoTime() + ms * 1_000_000;
    while (System.nanoTime() < end) {
      WorkerSlot.Status now = slot.status();
      if (now.state() != null && (!now.holding() || now.token() != before.token())) {
        String what = before.worker() + " went from " + before.state() + " token " + before.token() + " to "
            + now.state() + " token " + now.token() + (now.reused() ? " (reused)" : "") + " with its wall clock at "
            + phase;
        seen.append(what).append(judged ? "" : " (not judged: a captured lock lives by its application client,"
            + " which may read the wall clock itself)");
        if (judged) {
          trial.violation("clock-jump: " + what + ": the agent's decision changed with the wall clock");
        }
        return;
      }
      FaultKind.sleep(100);
    }
  }
}
