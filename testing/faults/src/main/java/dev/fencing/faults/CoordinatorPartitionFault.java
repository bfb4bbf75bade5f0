package dev.fencing.faults;

import dev.fencing.testing.TcpProxy;

/**
 * {@code partition}: the holder's TCP proxies to the coordinator's nodes blackhole past the TTL, then heal. With
 * several locks, the holder of one drawn from the seed.
 */
final class CoordinatorPartitionFault implements FaultKind {
  @Override
  public String inject(Trial trial) {
    WorkerSlot.Status h = trial.targetHolder();
    if (h == null) {
      return "no holder to partition";
    }
    WorkerSlot slot = trial.slot(h);
    long cut = trial.ttlMs() + 500 + trial.random().nextInt(1_500);
    slot.proxies().forEach(TcpProxy::partition);
    FaultKind.sleep(cut);
    slot.proxies().forEach(TcpProxy::heal);
    return "cut " + h.worker() + " (token " + h.token() + ") off " + trial.topology().coordinator().label + " for "
        + cut + " ms";
  }
}
