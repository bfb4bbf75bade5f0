package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which workers count as valid holders, per lock, for the harness's waits (pure logic on /status readings). */
class ValidHoldersTest {
  private static WorkerSlot.Status status(String worker, String state, long token) {
    return new WorkerSlot.Status(worker, state, token, false);
  }

  /**
   * With two locks the tokens come from one counter (etcd's revision, ZooKeeper's zxid), so the second lock's holder
   * can hold a lower token than the first lock's stale holder, for as long as it keeps its lease. A delay fault that
   * asked for every lock above the stale token waited its whole 30 s and released the held bytes with no successor
   * (10 of 15 delay trials in a ZooKeeper --locks=2 run); it asks for the first lock's successor only.
   */
  @Test
  void theFirstLocksSuccessorCountsWhileTheOtherLockKeepsALowerToken() {
    Map<String, WorkerSlot.Status> w1 = Map.of("faults-1", status("w1", "HOLDING", 20),
        "faults-2", status("w1", "STANDBY", 0));
    Map<String, WorkerSlot.Status> w2 = Map.of("faults-1", status("w2", "EXPIRED", 10),
        "faults-2", status("w2", "HOLDING", 5));

    assertThat(FaultRun.validHolders(List.of(w1, w2), l -> 10)).as("one bar for every lock").containsOnlyKeys(
        "faults-1");
    Map<String, WorkerSlot.Status> successor = FaultRun.validHolders(List.of(w1, w2),
        l -> l.equals("faults-1") ? 10 : 0);
    assertThat(successor).containsOnlyKeys("faults-1", "faults-2");
    assertThat(successor.get("faults-1").worker()).isEqualTo("w1");
    assertThat(successor.get("faults-2").worker()).isEqualTo("w2");
  }

  @Test
  void aReusedGrantOrAnotherStateIsNoHolderAndTheHighestTokenWins() {
    Map<String, WorkerSlot.Status> reused = Map.of("faults", new WorkerSlot.Status("w1", "HOLDING", 30, true));
    Map<String, WorkerSlot.Status> lower = Map.of("faults", status("w2", "HOLDING", 7));
    Map<String, WorkerSlot.Status> higher = Map.of("faults", status("w3", "HOLDING", 9));
    Map<String, WorkerSlot.Status> expired = Map.of("faults", status("w4", "EXPIRED", 40));

    assertThat(FaultRun.validHolders(List.of(reused, lower, higher, expired), l -> 0).get("faults").worker())
        .isEqualTo("w3");
    assertThat(FaultRun.validHolders(List.of(reused, lower, expired), l -> 7)).isEmpty();
  }
}
