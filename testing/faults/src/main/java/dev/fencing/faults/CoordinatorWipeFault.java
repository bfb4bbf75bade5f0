package dev.fencing.faults;

import java.time.Duration;
import java.util.List;

/**
 * {@code etcd-wipe} / {@code zk-wipe}: coordinator data loss and the runbook's remedy. The running agents meet the
 * new cluster (they knew a higher token and another cluster id: token reuse, they must block). On every tenth wipe
 * (the first included), fresh workers that know nothing are then started against it: they get low tokens, which the
 * fences, keeping the highest token they accepted, must reject. Then etcd's revision is bumped above every token
 * issued, and every lease is revoked until a valid holder appears: an agent that holds a reused grant (or waits with
 * a key created before the bump) campaigns again and gets a token above every one issued. That is the runbook's "let
 * the holder acquire the lock again" without restarting the JVMs. One instance per run: it counts the run's wipes.
 */
final class CoordinatorWipeFault implements FaultKind {
  private int wipes;

  @Override
  public String inject(Trial trial) {
    FaultCoordinator coordinator = trial.coordinator();
    boolean freshPhase = wipes++ % 10 == 0;
    long before = coordinator.revision();
    trial.wipeBegins(System.currentTimeMillis());
    coordinator.wipeAndRestart();
    FaultKind.sleep(2_000);
    List<String> reused = trial.slots().stream().flatMap(s -> s.statuses().values().stream())
        .filter(s -> s.reused()).map(s -> s.worker() + "@" + s.token()).toList();
    String fresh = "";
    if (freshPhase) {
      trial.restartWorkers();
      FaultKind.sleep(1_500);
      fresh = "; fresh workers' holder " + trial.slots().stream().map(WorkerSlot::status)
          .filter(s -> "HOLDING".equals(s.state())).map(s -> s.worker() + "@" + s.token()).findFirst()
          .orElse("none");
    }
    long after = coordinator.bumpAbove(before);
    int rounds = 0;
    // A holder below the bump (a fresh agent's low token) is no holder: every write of it is rejected.
    while (rounds < 8 && trial.holderOfEveryLock(Duration.ofMillis(rounds == 0 ? 0 : 3_000), before) == null) {
      coordinator.revokeAll();
      rounds++;
    }
    Topology.Coordinator kind = trial.topology().coordinator();
    return "wiped " + kind.label + " at revision " + before + "; reuse detected by "
        + (reused.isEmpty() ? "none" : reused) + fresh + "; revision bumped to " + after + ", "
        + (kind == Topology.Coordinator.ETCD ? "leases revoked " + rounds + "x" : "waited " + rounds + "x");
  }
}
