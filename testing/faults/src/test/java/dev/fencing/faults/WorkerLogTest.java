package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.faults.History.Attempt;
import dev.fencing.faults.History.Outcome;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkerLogTest {

  @Test
  void attemptsArePairedWithTheirOutcomesAmongTheAgentsLines() {
    String log = """
        WORKER STARTED w1.2
        ATTEMPT 1000 w1.2:1 pg HOLDING 42
        [fencing-agent] WARN a fence rejected a jdbc side effect of lock 'faults': reason stale_token
        OUTCOME 1010 w1.2:1 pg SQLSTATE FN001 fencing: stale token 42 for lock 'faults' on public.pg_total
        ATTEMPT 1011 w1.2:1 mariadb HOLDING 42
        OUTCOME 1015 w1.2:1 mariadb OK
        ATTEMPT 1016 w1.2:1 http EXPIRED 42
        OUTCOME 1020 w1.2:1 http HTTP 409 {"type":"urn:fencing:problem:stale-token"}
        ATTEMPT 1021 w1.2:1 kafka STANDBY 0
        """;
    List<Attempt> attempts = WorkerLog.parse(log);
    assertThat(attempts).extracting(Attempt::channel, Attempt::outcome, Attempt::endMs).containsExactly(
        org.assertj.core.groups.Tuple.tuple("pg", Outcome.REJECTED, 1010L),
        org.assertj.core.groups.Tuple.tuple("mariadb", Outcome.ACKED, 1015L),
        org.assertj.core.groups.Tuple.tuple("http", Outcome.REJECTED, 1020L),
        org.assertj.core.groups.Tuple.tuple("kafka", Outcome.NONE, -1L));
    assertThat(attempts.get(0)).extracting(Attempt::worker, Attempt::writeId, Attempt::startMs, Attempt::state,
        Attempt::tokenSeen).containsExactly("w1.2", "w1.2:1", 1000L, "HOLDING", 42L);
  }

  @Test
  void classifiesRawResults() {
    assertThat(WorkerLog.classify("OK")).isEqualTo(Outcome.ACKED);
    assertThat(WorkerLog.classify("SQLSTATE FN003 fencing-agent blocked")).isEqualTo(Outcome.BLOCKED);
    assertThat(WorkerLog.classify("SQLSTATE FN002 missing token")).isEqualTo(Outcome.REJECTED);
    assertThat(WorkerLog.classify("SQLSTATE 08006 connection lost")).isEqualTo(Outcome.FAILED);
    assertThat(WorkerLog.classify("HTTP 503 busy")).isEqualTo(Outcome.FAILED);
    assertThat(WorkerLog.classify("EXC java.util.concurrent.ExecutionException<org.apache.kafka.common.KafkaException"
        + "<dev.fencing.agent.bootstrap.FencingBlockedException blocked")).isEqualTo(Outcome.BLOCKED);
    assertThat(WorkerLog.classify("EXC dev.fencing.agent.bootstrap.FencingBlockedException blocked"))
        .isEqualTo(Outcome.BLOCKED);
    // The class chain decides, not the message.
    assertThat(WorkerLog.classify("EXC java.net.ConnectException dev.fencing.agent.bootstrap.FencingBlockedException"))
        .isEqualTo(Outcome.FAILED);
  }

  @Test
  void sumsTheAgentsCountersPerChannel() {
    String text = """
        # TYPE fencing_side_effects_total counter
        fencing_side_effects_total{channel="jdbc",fenced="true",lock="faults",outcome="blocked"} 3
        fencing_side_effects_total{channel="jdbc",fenced="false",lock="faults",outcome="blocked"} 1
        fencing_side_effects_total{channel="jdbc",fenced="true",lock="faults",outcome="tagged"} 90
        fencing_side_effects_total{channel="kafka",fenced="true",lock="faults",outcome="blocked"} 2
        fencing_rejections_total{channel="http",lock="faults",reason="stale_token"} 4
        fencing_rejections_total{channel="http",lock="faults",reason="missing_token"} 1
        """;
    History.AgentMetrics m = WorkerLog.metrics(text);
    assertThat(m.blocked()).isEqualTo(Map.of("jdbc", 4L, "kafka", 2L));
    assertThat(m.rejected()).isEqualTo(Map.of("http", 5L));
  }

  @Test
  void theGrantsAndTheTokenHeldAtEachOutcomeComeFromTheAgentsLines() {
    String log = """
        WORKER STARTED w1.2
        [fencing-agent] INFO holding lock 'faults' with fencing token 7 (lease 694d9a1b2c3d4e5f, etcd cluster 1a2b)
        ATTEMPT 1000 w1.2:1 pg HOLDING 7
        OUTCOME 1010 w1.2:1 pg OK
        [fencing-agent] WARN lock 'faults': token 3 was reused: lock given up, campaigning again in about 1000 ms
        ATTEMPT 1011 w1.2:2 pg EXPIRED 7
        [fencing-agent] INFO holding lock 'faults' with fencing token 12 (lease 694d9a1b2c3d4e60, etcd cluster 1a2b)
        OUTCOME 1020 w1.2:2 pg OK
        ATTEMPT 1021 w1.2:3 pg HOLDING 12
        """;
    assertThat(WorkerLog.grants(log)).containsExactly(7L, 12L);
    assertThat(WorkerLog.parse(log)).extracting(Attempt::writeId, Attempt::tokenHeld).containsExactly(
        org.assertj.core.groups.Tuple.tuple("w1.2:1", 7L),
        org.assertj.core.groups.Tuple.tuple("w1.2:2", 12L),
        org.assertj.core.groups.Tuple.tuple("w1.2:3", 12L));
  }
  /** With several locks: the ATTEMPT line ends with the lock, and the token held is that lock's. */
  @Test
  void withSectionsEachAttemptCarriesItsLockAndThatLocksTokenHeld() {
    String log = """
        [fencing-agent] INFO holding lock 'faults-1' with fencing token 7 (lease 694d9a1b2c3d4e5f, etcd cluster 1a2b)
        ATTEMPT 1000 w1.2:1/faults-1 kafka HOLDING 7 faults-1
        OUTCOME 1010 w1.2:1/faults-1 kafka OK
        ATTEMPT 1011 w1.2:1/faults-2 kafka STANDBY 0 faults-2
        OUTCOME 1020 w1.2:1/faults-2 kafka EXC org.apache.kafka.common.KafkaException<dev.fencing.agent.bootstrap.FencingBlockedException blocked
        [fencing-agent] INFO holding lock 'faults-2' with fencing token 9 (lease 694d9a1b2c3d4e60, etcd cluster 1a2b)
        ATTEMPT 1021 w1.2:2/faults-2 kafka HOLDING 9 faults-2
        """;
    assertThat(WorkerLog.grantsByLock(log)).isEqualTo(Map.of("faults-1", java.util.Set.of(7L), "faults-2",
        java.util.Set.of(9L)));
    assertThat(WorkerLog.parse(log)).extracting(Attempt::writeId, Attempt::worker, Attempt::lock, Attempt::tokenHeld,
        Attempt::outcome).containsExactly(
        org.assertj.core.groups.Tuple.tuple("w1.2:1/faults-1", "w1.2", "faults-1", 7L, History.Outcome.ACKED),
        org.assertj.core.groups.Tuple.tuple("w1.2:1/faults-2", "w1.2", "faults-2", 0L, History.Outcome.BLOCKED),
        org.assertj.core.groups.Tuple.tuple("w1.2:2/faults-2", "w1.2", "faults-2", 9L, History.Outcome.NONE));
  }

  @Test
  void theWorkerReadsEachLocksEntryOfTheStatus() {
    String body = "{\"lock\":\"none\",\"state\":\"NO_LEASE\",\"token\":0,\"locks\":[{\"lock\":\"faults-1\","
        + "\"scope\":\"sections\",\"state\":\"STANDBY\",\"token\":3},{\"lock\":\"faults-2\",\"scope\":"
        + "\"sections\",\"state\":\"HOLDING\",\"token\":12}]}";
    assertThat(FaultWorker.lockStatus(body, "faults-1")).isEqualTo("STANDBY 3");
    assertThat(FaultWorker.lockStatus(body, "faults-2")).isEqualTo("HOLDING 12");
    assertThat(FaultWorker.lockStatus(body, "faults-3")).isEqualTo("UNKNOWN 0");
    assertThat(FaultWorker.lockStatus(body, null)).isEqualTo("NO_LEASE 0");
    assertThat(FaultWorker.lockStatus(null, "faults-1")).isEqualTo("UNKNOWN 0");
  }

  @Test
  void theWorkerReadsItsOwnLocksEntryOfCaptured() {
    String body = "{\"lock\":\"none\",\"state\":\"NO_LEASE\",\"token\":0,\"locks\":[],\"captured\":[{\"lock\":"
        + "\"faults\",\"library\":\"curator\",\"path\":\"/faults\",\"state\":\"EXPIRED\",\"token\":4294967302,"
        + "\"leaseRemainingMs\":0,\"acquisitionsTotal\":1,\"tokenReused\":false,\"coordinator\":\"zookeeper x\"}]}";
    assertThat(FaultWorker.entryStatus(body, "captured", "faults")).isEqualTo("EXPIRED 4294967302");
    assertThat(FaultWorker.entryStatus(body, "locks", "faults")).isEqualTo("UNKNOWN 0");
    assertThat(FaultWorker.entryStatus("{\"captured\":[]}", "captured", "faults")).isEqualTo("UNKNOWN 0");
  }
}
