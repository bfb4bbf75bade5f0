package dev.fencing.faults;

import dev.fencing.testing.TcpProxy;

/**
 * {@code data-partition}: the holder is cut from one resource (not from etcd: it keeps its lease) for longer than
 * the TTL, with its write to that resource in flight, then healed: the write goes on under the token it carried,
 * and nothing it had acknowledged may be lost.
 */
final class DataPartitionFault implements FaultKind {
  @Override
  public String inject(Trial trial) {
    WorkerSlot.Status h = trial.holder();
    if (h == null) {
      return "no holder to cut from a resource";
    }
    WorkerSlot slot = trial.slot(h);
    String resource = FaultKind.anyResource(trial.random());
    long cut = trial.ttlMs() + 500 + trial.random().nextInt(1_500);
    TcpProxy proxy = slot.dataPath().proxy(resource);
    proxy.partition();
    try {
      FaultKind.sleep(cut);
    } finally {
      proxy.heal();
    }
    return "cut " + h.worker() + " (token " + h.token() + ") off " + resource + " for " + cut + " ms";
  }

}
