package dev.fencing.faults;

/**
 * {@code pause}: SIGSTOP of the holder past its TTL, at a random point of its loop (often mid-call), then SIGCONT.
 * With several locks, the holder of one drawn from the seed.
 */
final class PauseFault implements FaultKind {
  @Override
  public String inject(Trial trial) {
    WorkerSlot.Status h = trial.targetHolder();
    if (h == null) {
      return "no holder to freeze";
    }
    WorkerSlot slot = trial.slot(h);
    FaultKind.sleep(trial.random().nextInt(150));
    long pause = trial.ttlMs() + 300 + trial.random().nextInt(1_200);
    long at = System.currentTimeMillis();
    slot.current().jvm().suspend();
    FaultKind.sleep(pause);
    slot.current().jvm().resume();
    trial.froze(h.worker(), at);
    return "froze " + h.worker() + " (token " + h.token() + ") for " + pause + " ms";
  }
}
