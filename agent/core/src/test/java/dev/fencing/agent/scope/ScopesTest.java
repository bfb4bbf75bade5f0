package dev.fencing.agent.scope;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Sections;
import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.metrics.AgentMetrics;
import dev.fencing.agent.metrics.FencingSeries;
import dev.fencing.agent.instrumentation.api.SideEffectCounters.Outcome;
import dev.fencing.agent.status.StatusJson;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The decision per lock scope (docs/DESIGN.md section 4, "Lock scopes"), on real policies and token states. */
class ScopesTest {
  private static final long FAR = 600_000_000_000L;

  @AfterEach
  void clean() {
    TokenContext.exit(new Object());
    Sections.install(Map.of());
  }

  private static Scopes scopes(String args) {
    Scopes s = Scopes.of(ConfigLoader.load(args, new Properties(), Map.of()));
    Sections.install(s.sectionTable());
    return s;
  }

  private static LockRuntime lock(Scopes s, String name) {
    return s.locks().stream().filter(r -> r.lock().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void eachSectionLockHasItsOwnStateTokenAndPolicy() {
    Scopes s = scopes("sections=com.acme.Jobs#jobA@lock-a,com.acme.Jobs#jobB@lock-b");
    assertThat(s.locks()).extracting(LockRuntime::lock).containsExactly("lock-a", "lock-b");
    lock(s, "lock-a").state().granted(41, 1, 1, System.nanoTime() + FAR);

    Object inA = Sections.enter("com.acme.Jobs.jobA", true);
    Decision a = s.gate().decide(Channel.JDBC, true, true);
    assertThat(a.isTag()).isTrue();
    assertThat(a.lock()).isEqualTo("lock-a");
    assertThat(a.token()).isEqualTo(41);
    Sections.exit(inA);

    assertThat(Sections.enter("com.acme.Jobs.jobB", true)).as("void section of a lock not held").isSameAs(Sections.SKIP);
    assertThat(lock(s, "lock-b").skippedCount()).isEqualTo(1);
  }

  @Test
  void outsideEverySectionWithoutAJvmWideLockSideEffectsPassCountedUnderNone() {
    Scopes s = scopes("sections=com.acme.Jobs#jobA@lock-a");
    Decision d = s.gate().decide(Channel.JDBC, true, true);
    assertThat(d.kind()).isEqualTo(Decision.Kind.PASS);
    assertThat(d.lock()).isEqualTo("none");
    assertThat(s.outside().lock()).isEqualTo("none");
    assertThat(s.outside().counters().count(Channel.JDBC, true, Outcome.PASSED)).isEqualTo(1);
    assertThat(lock(s, "lock-a").counters().count(Channel.JDBC, true, Outcome.PASSED)).isZero();
  }

  @Test
  void outsideEverySectionAnInboundTokenIsCarried() {
    Scopes s = scopes("sections=com.acme.Jobs#jobA@lock-a");
    Object request = TokenContext.enter("upstream", "99");
    Decision d = s.gate().decide(Channel.HTTP, true, false);
    assertThat(d.isTag()).isTrue();
    assertThat(d.lock()).isEqualTo("upstream");
    assertThat(d.token()).isEqualTo(99);
    TokenContext.exit(request);
  }

  @Test
  void aSectionReturningAValueOnAStandbyHasItsWritesRefusedAsOnStandbyButReadsPass() {
    Scopes s = scopes("sections=com.acme.Jobs#report@lock-a");
    Object in = Sections.enter("com.acme.Jobs.report", false);
    Decision write = s.gate().decide(Channel.JDBC, true, true);
    Decision read = s.gate().decide(Channel.JDBC, false, true);
    Sections.exit(in);
    assertThat(write.isBlock()).isTrue();
    assertThat(write.reason()).isEqualTo(BlockReason.STANDBY);
    assertThat(write.lock()).isEqualTo("lock-a");
    assertThat(read.isBlock()).isFalse();
    assertThat(lock(s, "lock-a").counters().count(Channel.JDBC, true, Outcome.BLOCKED)).isEqualTo(1);
  }

  @Test
  void insideASectionAnInboundTokenIsNotAdoptedEvenWhenTheLockIsNotHeld() {
    Scopes s = scopes("sections=com.acme.Jobs#report@lock-a");
    Object request = TokenContext.enter("lock-a", "1000");
    Object in = Sections.enter("com.acme.Jobs.report", false);
    Decision d = s.gate().decide(Channel.JDBC, true, true);
    Sections.exit(in);
    TokenContext.exit(request);
    assertThat(d.isBlock()).as("a forged Fencing-Token must not make a section write").isTrue();
  }

  @Test
  void withAJvmWideLockOutsideSectionsIsTodaysPolicyAndASectionOfAnotherLockHasItsOwn() {
    Scopes s = scopes("lock=ledger,sections=com.acme.Jobs#jobA@lock-a");
    assertThat(s.locks()).extracting(LockRuntime::lock).containsExactly("ledger", "lock-a");
    lock(s, "ledger").state().granted(5, 1, 1, System.nanoTime() + FAR);
    assertThat(s.gate().decide(Channel.KAFKA, true, false).token()).isEqualTo(5);
    Object in = Sections.enter("com.acme.Jobs.jobA", false);
    Decision d = s.gate().decide(Channel.KAFKA, true, false);
    Sections.exit(in);
    assertThat(d.isBlock()).as("lock-a is not held, whatever the JVM-wide lock").isTrue();
    assertThat(d.lock()).isEqualTo("lock-a");
  }

  @Test
  void withoutSectionsTheGateIsTheJvmWidePolicyItself() {
    Scopes s = scopes("lock=ledger");
    assertThat(s.gate()).isSameAs(s.outside().policy());
  }

  @Test
  void bufferedRecordsAreRecheckedByTheLockTheyWereTaggedWith() {
    Scopes s = scopes("sections=com.acme.Jobs#jobA@lock-a");
    LockRuntime a = lock(s, "lock-a");
    dev.fencing.agent.token.Grant g = a.state().granted(41, 1, 1, System.nanoTime() + FAR);
    Object in = Sections.enter("com.acme.Jobs.jobA", true);
    Decision tagged = s.gate().decide(Channel.KAFKA, true, false);
    Sections.exit(in);
    assertThat(s.gate().recheck(Channel.KAFKA, false, tagged, 1)).as("still held").isNull();
    a.state().lost(g, dev.fencing.agent.token.LossReason.LEASE_REVOKED);
    Decision now = s.gate().recheck(Channel.KAFKA, false, tagged, 1);
    assertThat(now).isNotNull();
    assertThat(now.isBlock()).isTrue();
  }

  @Test
  void metricsCarryEveryConfiguredLockAndStatusListsEachLockWithItsSections() {
    Scopes s = scopes("sections=com.acme.Jobs#jobA@lock-a,com.acme.Jobs#jobB@lock-b");
    lock(s, "lock-a").state().granted(41, 0x2a, 1, System.nanoTime() + FAR);
    assertThat(Sections.enter("com.acme.Jobs.jobB", true)).isSameAs(Sections.SKIP);
    String scrape = new AgentMetrics(FencingSeries.of(s)).scrape();
    assertThat(scrape).contains("fencing_lease_held{lock=\"lock-a\"} 1.0", "fencing_lease_held{lock=\"lock-b\"} 0.0",
        "fencing_token{lock=\"lock-a\"} 41.0", "fencing_section_skipped_total{lock=\"lock-b\"} 1.0",
        "fencing_section_skipped_total{lock=\"lock-a\"} 0.0");
    assertThat(scrape).as("no lease series for 'none', which campaigns for nothing")
        .doesNotContain("fencing_lease_held{lock=\"none\"}");
    assertThat(scrape).contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"true\",lock=\"none\",outcome=\"passed\"}");
    String status = StatusJson.render(s, ConfigLoader.load("sections=com.acme.Jobs#jobA@lock-a,com.acme.Jobs#jobB@lock-b",
        new Properties(), Map.of()), 0);
    assertThat(status).contains("\"lock\":\"none\",\"state\":\"NO_LEASE\"");
    assertThat(status).contains("{\"lock\":\"lock-a\",\"scope\":\"sections\",\"state\":\"HOLDING\",\"token\":41,");
    assertThat(status).contains("\"leaseId\":\"2a\"");
    assertThat(status).contains("\"sections\":[{\"section\":\"com.acme.Jobs#jobA\",\"status\":\"class not loaded\"}]");
    assertThat(status).contains("\"lock\":\"lock-b\",\"scope\":\"sections\",\"state\":\"STARTING\"");
    assertThat(status).contains("\"sectionSkippedTotal\":1");
  }

  @Test
  void decidingInsideASectionAllocatesNothing() {
    Scopes s = scopes("sections=com.acme.Jobs#jobA@lock-a");
    lock(s, "lock-a").state().granted(41, 1, 1, System.nanoTime() + FAR);
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().getId();
    Decision last = null;
    for (int i = 0; i < 200_000; i++) {
      Object in = Sections.enter("com.acme.Jobs.jobA", true);
      last = s.gate().decide(Channel.JDBC, (i & 1) == 0, (i & 2) == 0);
      Sections.exit(in);
      last = s.gate().decide(Channel.JDBC, true, false); // outside: passed
    }
    long before = threads.getThreadAllocatedBytes(id);
    for (int i = 0; i < 1_000_000; i++) {
      Object in = Sections.enter("com.acme.Jobs.jobA", true);
      last = s.gate().decide(Channel.JDBC, (i & 1) == 0, (i & 2) == 0);
      Sections.exit(in);
      last = s.gate().decide(Channel.JDBC, true, false);
    }
    long allocated = threads.getThreadAllocatedBytes(id) - before;
    assertThat(last.kind()).isEqualTo(Decision.Kind.PASS);
    assertThat(allocated).as("bytes allocated by 1,000,000 section entries and 2,000,000 decisions")
        .isLessThan(64 * 1024);
  }
}
