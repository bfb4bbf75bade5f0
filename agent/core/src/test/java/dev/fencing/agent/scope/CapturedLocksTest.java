package dev.fencing.agent.scope;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.status.StatusJson;
import dev.fencing.agent.token.LeasePhase;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The captured application locks: names, scope on the acquiring thread, deadline from answered syncs, the bound. */
class CapturedLocksTest {
  private static Scopes scopes(String args) {
    Scopes s = Scopes.of(ConfigLoader.load(args, new Properties(), Map.of()));
    Fencing.install(s.gate());
    return s;
  }

  @AfterEach
  void leaveScopes() {
    TokenContext.exit(new Object()); // nothing current on the test thread afterwards
  }

  /** The coordinators the reports name (see CaptureHook). */
  private static final String ZK = "zookeeper 127.0.0.1:2181";
  private static final String ETCD = "etcd cluster 1a2b";

  @Test
  void oneLockPathOnTwoEnsemblesIsTwoLocksWithTwoTokenStatesAndNames() {
    Scopes s = scopes("lease.enabled=false");
    CapturedLocks c = s.captured();
    c.acquired("curator", ZK, "/locks/ledger", "/locks/ledger/n1", 42, 7, System.nanoTime(), 3000);
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("locks.ledger");
    // Another ensemble, another session: a lower czxid there is not a reuse of this lock's token.
    String other = "zookeeper 10.0.0.9:2181";
    c.acquired("curator", other, "/locks/ledger", "/locks/ledger/n2", 5, 8, System.nanoTime(), 3000);
    Decision d = Fencing.decide(Channel.JDBC, true, true);
    assertThat(d.isTag()).as("the second lock is held, its token not taken for a reuse").isTrue();
    assertThat(d.token()).isEqualTo(5);
    String second = CapturedLocks.disambiguated("locks.ledger", CapturedLocks.identity("curator", other,
        "/locks/ledger"));
    assertThat(d.lock()).isEqualTo(second).startsWith("locks.ledger-").hasSize("locks.ledger-".length() + 8);
    assertThat(c.locks()).hasSize(2);

    c.released("curator", "/locks/ledger/n2"); // one release does not end the other lock's grant
    assertThat(c.locks()).filteredOn(l -> l.runtime().lock().equals("locks.ledger"))
        .allMatch(l -> l.runtime().state().phase() == LeasePhase.HOLDING);
  }

  @Test
  void bufferedRecordsOfACapturedLockAreJudgedByThatLock() {
    Scopes s = scopes("lock=web"); // a JVM-wide lock on standby beside the captured one
    CapturedLocks c = s.captured();
    c.acquired("curator", ZK, "/locks/ledger", "/locks/ledger/n1", 42, 7, System.nanoTime(), 3000);
    Decision tagged = Fencing.decide(Channel.KAFKA, true, false);
    assertThat(tagged.isTag()).isTrue();
    assertThat(Fencing.recheck(Channel.KAFKA, false, tagged, 1)).as("held: its records leave").isNull();
    c.released("curator", "/locks/ledger/n1");
    Decision after = Fencing.recheck(Channel.KAFKA, false, tagged, 1);
    assertThat(after).as("released: its records still buffered must not leave").isNotNull();
    assertThat(after.isBlock()).isTrue();
    assertThat(after.lock()).isEqualTo("locks.ledger");
  }

  @Test
  void pathsThatMapToOneNameAreTwoLocks() {
    Scopes s = scopes("lease.enabled=false");
    CapturedLocks c = s.captured();
    c.acquired("curator", ZK, "/a/b", "/a/b/n1", 42, 7, System.nanoTime(), 3000);
    c.released("curator", "/a/b/n1");
    c.acquired("curator", ZK, "/a.b", "/a.b/n1", 43, 7, System.nanoTime(), 3000);
    assertThat(c.locks()).extracting(l -> l.runtime().lock())
        .containsExactlyInAnyOrder("a.b", CapturedLocks.disambiguated("a.b", CapturedLocks.identity("curator", ZK,
            "/a.b")));
    assertThat(CapturedLocks.disambiguated("x".repeat(128), "id")).hasSize(128);
  }

  @Test
  void lockNamesComeFromThePathWithinTheLockNameRule() {
    assertThat(CapturedLocks.lockName("/locks/ledger")).isEqualTo("locks.ledger");
    assertThat(CapturedLocks.lockName("/app/leader/")).isEqualTo("app.leader");
    assertThat(CapturedLocks.lockName("jobs:nightly run")).isEqualTo("jobs.nightly.run");
    assertThat(CapturedLocks.lockName("/")).isNull();
    assertThat(CapturedLocks.lockName("/" + "x".repeat(129))).isNull();
    assertThat(CapturedLocks.lockName("/" + "x".repeat(128))).hasSize(128);
  }

  @Test
  void theAcquiringThreadCarriesTheLockTokenUntilRelease() {
    Scopes s = scopes("lease.enabled=false");
    CapturedLocks c = s.captured();
    assertThat(Fencing.decide(Channel.JDBC, true, true).isTag()).as("outside every scope").isFalse();

    c.acquired("curator", ZK, "/locks/ledger", "/locks/ledger/_c_1-lock-0000000001", 42, 7, System.nanoTime(), 3000);
    Decision d = Fencing.decide(Channel.JDBC, true, true);
    assertThat(d.isTag()).isTrue();
    assertThat(d.lock()).isEqualTo("locks.ledger");
    assertThat(d.token()).isEqualTo(42);
    assertThat(StatusJson.render(s, ConfigLoader.load("lease.enabled=false"), 0))
        .contains("\"captured\":[{\"lock\":\"locks.ledger\",\"library\":\"curator\",\"path\":\"/locks/ledger\","
            + "\"state\":\"HOLDING\",\"token\":42");

    c.released("curator", "/locks/ledger/_c_1-lock-0000000001");
    assertThat(Fencing.decide(Channel.JDBC, true, true).isTag()).as("after release").isFalse();
    assertThat(c.locks().get(0).runtime().state().phase()).isNotEqualTo(LeasePhase.HOLDING);
  }

  /** A captured lock is counted and exposed under its own lock label, in both exports, from its capture on. */
  @Test
  void aCapturedLockHasItsOwnMetricsLabelFromItsCaptureOn() {
    Scopes s = scopes("lock=jvm-lock");
    dev.fencing.agent.metrics.AgentMetrics metrics = new dev.fencing.agent.metrics.AgentMetrics(
        dev.fencing.agent.metrics.FencingSeries.of(s));
    java.util.List<String> told = new java.util.ArrayList<>();
    s.captured().onCapture(r -> {
      told.add(r.lock());
      metrics.add(dev.fencing.agent.metrics.FencingSeries.ofCaptured(r, s.rejections()));
    });
    assertThat(metrics.scrape()).doesNotContain("locks.ledger");

    s.captured().acquired("curator", ZK, "/locks/ledger", "/locks/ledger/_c_1-lock-0000000001", 42, 7,
        System.nanoTime(),
        3000);
    assertThat(Fencing.decide(Channel.JDBC, true, true).isTag()).isTrue();
    s.rejections().record(Channel.JDBC, dev.fencing.agent.instrumentation.api.RejectionCounters.Reason.STALE_TOKEN);
    assertThat(told).containsExactly("locks.ledger");
    String scrape = metrics.scrape();
    assertThat(scrape).contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"true\",lock=\"locks.ledger\","
        + "outcome=\"tagged\"} 1.0");
    assertThat(scrape).contains("fencing_rejections_total{channel=\"jdbc\",lock=\"locks.ledger\","
        + "reason=\"stale_token\"} 1.0");
    assertThat(scrape).contains("fencing_rejections_total{channel=\"jdbc\",lock=\"jvm-lock\","
        + "reason=\"stale_token\"} 0.0");
    // A second acquisition of the same lock adds no second label, and a later listener hears of it once.
    s.captured().released("curator", "/locks/ledger/_c_1-lock-0000000001");
    s.captured().acquired("curator", ZK, "/locks/ledger", "/locks/ledger/_c_1-lock-0000000002", 43, 7,
        System.nanoTime(),
        3000);
    java.util.List<String> late = new java.util.ArrayList<>();
    s.captured().onCapture(r -> late.add(r.lock()));
    assertThat(told).containsExactly("locks.ledger");
    assertThat(late).containsExactly("locks.ledger");
  }

  @Test
  void answeredPingsMoveTheDeadlineToThePreviousPingsSendTimeAndAPauseExpiresIt() {
    Scopes s = scopes("lease.enabled=false,capture.safety-margin=100ms");
    CapturedLocks c = s.captured();
    long now = System.nanoTime();
    long ms = TimeUnit.MILLISECONDS.toNanos(1);
    c.acquired("curator", ZK, "/l", "/l/n1", 5, 9, now, 1000);
    var state = c.locks().get(0).runtime().state();
    long first = state.view().grant().deadlineNanos();
    assertThat(first).isEqualTo(now + 900 * ms);

    c.alive(9, now + 300 * ms, 1000); // the first answered sync is only remembered
    assertThat(state.view().grant().deadlineNanos()).isEqualTo(first);
    c.alive(9, now + 600 * ms, 1000); // the second moves the deadline to the first's send time
    assertThat(state.view().grant().deadlineNanos()).isEqualTo(now + 1200 * ms);
    c.alive(8, now + 700 * ms, 1000); // another session's syncs do not
    assertThat(state.view().grant().deadlineNanos()).isEqualTo(now + 1200 * ms);

    c.acquired("curator", ZK, "/l", "/l/n2", 6, 9, now - 2000 * ms, 1000); // a session last known alive 2 s ago
    assertThat(Fencing.decide(Channel.JDBC, true, false).isBlock()).as("past its deadline").isTrue();
    c.alive(9, now - 1500 * ms, 1000);
    c.alive(9, now - 1400 * ms, 1000); // a late answer to an old sync never brings it back
    assertThat(state.phase()).isEqualTo(LeasePhase.EXPIRED);
  }

  @Test
  void locksBeyondTheBoundAreNotCaptured() {
    Scopes s = scopes("lease.enabled=false,capture.max-locks=1");
    CapturedLocks c = s.captured();
    c.acquired("curator", ZK, "/a", "/a/n", 1, 1, System.nanoTime(), 1000);
    c.released("curator", "/a/n");
    c.acquired("curator", ZK, "/b", "/b/n", 2, 1, System.nanoTime(), 1000);
    assertThat(c.locks()).hasSize(1);
    assertThat(Fencing.decide(Channel.JDBC, true, true).isTag()).isFalse();
  }

  @Test
  void aLockGrantedOnACallbackThreadIsEnteredByTheThreadThatWaitsForItAndTrustedByItsLease() throws Exception {
    Scopes s = scopes("lease.enabled=false,capture.safety-margin=100ms");
    CapturedLocks c = s.captured();
    long now = System.nanoTime();
    long ms = TimeUnit.MILLISECONDS.toNanos(1);
    c.renewed(77, now, 2000); // the lease grant: 2 s from when it was asked for
    Thread callback = new Thread(() -> c.granted("jetcd", ETCD, "ledger-lock", "ledger-lock/4d", 12, 77));
    callback.start();
    callback.join();
    assertThat(Fencing.decide(Channel.JDBC, true, true).isTag()).as("before waiting for it").isFalse();
    c.entered("ledger-lock/4d");
    Decision d = Fencing.decide(Channel.JDBC, true, true);
    assertThat(d.isTag()).isTrue();
    assertThat(d.lock()).isEqualTo("ledger-lock");
    assertThat(d.token()).isEqualTo(12);
    var state = c.locks().get(0).runtime().state();
    assertThat(state.view().grant().deadlineNanos()).isEqualTo(now + 1900 * ms);
    c.renewed(77, now + 500 * ms, 2000); // an answered keepalive sent 0.5 s later
    assertThat(state.view().grant().deadlineNanos()).isEqualTo(now + 2400 * ms);
    c.sessionLost(77, "lease expired");
    assertThat(state.phase()).isEqualTo(LeasePhase.LOST);
    c.released("jetcd", "ledger-lock/4d");
    assertThat(Fencing.decide(Channel.JDBC, true, true).isTag()).as("after unlock").isFalse();
  }

  @Test
  void aLockOnALeaseThisJvmNeverSawIsNotTrusted() {
    Scopes s = scopes("lease.enabled=false");
    CapturedLocks c = s.captured();
    c.granted("jetcd", ETCD, "other", "other/1", 3, 99);
    c.entered("other/1");
    assertThat(Fencing.decide(Channel.JDBC, true, false).isBlock()).isTrue();
    c.released("jetcd", "other/1");
  }

  @Test
  void anAcquisitionTheAgentCannotVerifyPutsItsThreadInTheLockRefusedUntilRelease() {
    Scopes s = scopes("lease.enabled=false");
    CapturedLocks c = s.captured();
    c.acquired("curator", ZK, "/locks/ledger", "/locks/ledger/_c_1-lock-0000000001", 42, 7, System.nanoTime(), 3000);
    c.released("curator", "/locks/ledger/_c_1-lock-0000000001");
    assertThat(Fencing.decide(Channel.JDBC, true, false).isBlock()).as("outside every scope").isFalse();

    // Curator's acquire returned, but the node is another session's: the session expired around the acquisition.
    c.unverified("curator", ZK, "/locks/ledger", "/locks/ledger/_c_2-lock-0000000002", "its node is gone");
    c.entered("/locks/ledger/_c_2-lock-0000000002");
    Decision unfenced = Fencing.decide(Channel.JDBC, true, false);
    assertThat(unfenced.isBlock()).as("an unfenced write in the critical section").isTrue();
    assertThat(unfenced.lock()).isEqualTo("locks.ledger");
    assertThat(unfenced.reason()).isEqualTo(dev.fencing.agent.bootstrap.BlockReason.LOST);
    assertThat(Fencing.decide(Channel.JDBC, true, true).isBlock()).as("a fenced one: no token to carry").isTrue();
    assertThat(Fencing.decide(Channel.JDBC, false, true).isTag()).as("a read passes untagged").isFalse();
    var state = c.locks().get(0).runtime().state();
    assertThat(state.phase()).isEqualTo(LeasePhase.LOST);
    assertThat(state.view().detail()).contains("not verified: its node is gone");
    c.renewed(7, System.nanoTime(), 3000); // nothing revives it
    c.alive(7, System.nanoTime(), 3000);
    c.alive(7, System.nanoTime(), 3000);
    assertThat(Fencing.decide(Channel.JDBC, true, true).isBlock()).isTrue();

    c.released("curator", "/locks/ledger/_c_2-lock-0000000002");
    assertThat(Fencing.decide(Channel.JDBC, true, false).isBlock()).as("after release").isFalse();
    c.acquired("curator", ZK, "/locks/ledger", "/locks/ledger/_c_3-lock-0000000003", 44, 8, System.nanoTime(), 3000);
    assertThat(Fencing.decide(Channel.JDBC, true, true).token()).as("the next verified acquisition").isEqualTo(44);
    c.released("curator", "/locks/ledger/_c_3-lock-0000000003");
  }

  /** The decision of a side effect made on a new thread, in no scope. */
  /** A thread started before any scope was entered (a thread started in one would inherit it). */
  private static final java.util.concurrent.ThreadPoolExecutor OTHER = new java.util.concurrent.ThreadPoolExecutor(1,
      1, 0, TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
        Thread t = new Thread(r, "another-thread");
        t.setDaemon(true);
        return t;
      });

  static {
    OTHER.prestartAllCoreThreads();
  }

  private static Decision onAnotherThread(boolean fenced) throws Exception {
    return OTHER.submit(() -> Fencing.decide(Channel.JDBC, true, fenced)).get(5, TimeUnit.SECONDS);
  }

  private static Decision onAThreadStartedHere(boolean fenced) throws Exception {
    Decision[] d = new Decision[1];
    Thread t = new Thread(() -> d[0] = Fencing.decide(Channel.JDBC, true, fenced));
    t.start();
    t.join();
    return d[0];
  }

  @Test
  void aLeadingLatchDecidesEveryThreadOutsideAScopeFromItsLeadershipUntilItIsClosed() throws Exception {
    Scopes s = scopes("lease.enabled=false");
    CapturedLocks c = s.captured();
    assertThat(onAnotherThread(true).isTag()).as("before the latch leads").isFalse();
    c.leading("curator", ZK, "/app/leader", "/app/leader/_c_1-latch-0000000001", 42, 7, System.nanoTime(), 3000);
    Decision d = onAnotherThread(true);
    assertThat(d.isTag()).as("any thread outside a scope: the leader's work").isTrue();
    assertThat(d.lock()).isEqualTo("app.leader");
    assertThat(d.token()).isEqualTo(42);
    assertThat(Fencing.decide(Channel.JDBC, true, true).token()).isEqualTo(42);

    c.acquired("curator", ZK, "/app/mutex", "/app/mutex/_c_2-lock-0000000001", 50, 7, System.nanoTime(), 3000);
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).as("inside a captured mutex: the mutex decides")
        .isEqualTo("app.mutex");
    c.released("curator", "/app/mutex/_c_2-lock-0000000001");

    c.released("curator", "/app/leader/_c_1-latch-0000000001"); // leadership lost: the deposed leader's work
    assertThat(onAnotherThread(false).isBlock()).as("unfenced, after the leadership ended").isTrue();
    assertThat(onAnotherThread(true).token()).as("fenced: the last token, which the fence refuses after a successor's")
        .isEqualTo(42);

    c.leading("curator", ZK, "/app/leader", "/app/leader/_c_1-latch-0000000002", 60, 7, System.nanoTime(), 3000);
    assertThat(onAnotherThread(true).token()).as("leading again: the new node's token").isEqualTo(60);

    c.closed("curator", ZK, "/app/leader");
    Decision closed = onAnotherThread(false);
    assertThat(closed.isTag() || closed.isBlock()).as("after close: as outside every scope").isFalse();
  }

  /** A LeaderSelector's leader may start threads of its own while {@code takeLeadership} only waits. */
  @Test
  void aSelectorsLeadershipDecidesTheThreadsItStartsAsALatchDoesUntilItIsClosed() throws Exception {
    Scopes s = scopes("lease.enabled=false");
    CapturedLocks c = s.captured();
    c.acquired("curator", ZK, "/app/elect", "/app/elect/_c_1-lock-0000000001", 42, 7, System.nanoTime(), 3000);
    assertThat(onAnotherThread(true).isTag()).as("a mutex: its acquiring thread only").isFalse();
    assertThat(onAThreadStartedHere(true).token()).as("and the threads it starts while it holds the mutex")
        .isEqualTo(42);
    c.leads("curator", ZK, "/app/elect");
    assertThat(onAnotherThread(true).token()).as("the leadership: every thread outside a scope").isEqualTo(42);
    c.released("curator", "/app/elect/_c_1-lock-0000000001"); // takeLeadership returned, or the session was lost
    assertThat(onAnotherThread(false).isBlock()).as("the deposed leader's work").isTrue();
    c.closed("curator", ZK, "/app/elect");
    Decision closed = onAnotherThread(false);
    assertThat(closed.isTag() || closed.isBlock()).as("after close: as outside every scope").isFalse();
  }

  @Test
  void aLatchLeavesTheJvmWideLockInCharge() throws Exception {
    Scopes s = scopes("lock=jobs,standby=block");
    CapturedLocks c = s.captured();
    c.leading("curator", ZK, "/app/leader", "/app/leader/_c_1-latch-0000000001", 42, 7, System.nanoTime(), 3000);
    Decision d = onAnotherThread(false);
    assertThat(d.lock()).as("fencing.lock decides outside scopes").isEqualTo("jobs");
    assertThat(c.locks()).extracting(CapturedLocks.Captured::path).containsExactly("/app/leader");
  }
}
