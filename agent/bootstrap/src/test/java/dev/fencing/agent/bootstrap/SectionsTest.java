package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Section entry and exit (what the section advice calls), on scopes whose "holding" a test sets. */
class SectionsTest {
  /** A lock scope whose lease a test switches; its gate tags with the lock's name. */
  static final class TestScope extends LockScope {
    volatile boolean holding;
    int skipped;

    TestScope(String lock) {
      super(lock, new SideEffectGate() {
        @Override
        public Decision decide(Channel channel, boolean write, boolean fenced) {
          return Decision.tag(lock, 7);
        }
      });
    }

    @Override
    public boolean runsVoid() {
      return holding;
    }

    @Override
    public void skipped() {
      skipped++;
    }
  }

  private final TestScope a = new TestScope("lock-a");
  private final TestScope b = new TestScope("lock-b");

  SectionsTest() {
    Sections.install(Map.of("com.acme.Jobs.jobA", a, "com.acme.Jobs.jobB", b, "com.acme.Jobs.report", a));
  }

  @AfterEach
  void clean() {
    TokenContext.exit(new Object());
    Sections.install(Map.of());
  }

  @Test
  void aVoidSectionRunsInItsLocksScopeWhileHoldingAndExitRestoresNothing() {
    a.holding = true;
    Object entered = Sections.enter("com.acme.Jobs.jobA", true);
    assertThat(entered).isNotSameAs(Sections.SKIP);
    assertThat(TokenContext.scope()).isSameAs(a);
    Sections.exit(entered);
    assertThat(TokenContext.carried()).isNull();
  }

  @Test
  void aVoidSectionIsSkippedAndCountedWhenNotHolding() {
    Object entered = Sections.enter("com.acme.Jobs.jobA", true);
    assertThat(entered).isSameAs(Sections.SKIP);
    assertThat(a.skipped).isEqualTo(1);
    assertThat(TokenContext.carried()).as("a skipped section changes nothing").isNull();
    Sections.exit(entered);
    assertThat(TokenContext.carried()).isNull();
  }

  @Test
  void aSectionReturningAValueRunsInTheScopeEvenWhenNotHolding() {
    Object entered = Sections.enter("com.acme.Jobs.report", false);
    assertThat(TokenContext.scope()).as("its side effects go to the lock's policy, which refuses them").isSameAs(a);
    assertThat(a.skipped).isZero();
    Sections.exit(entered);
    assertThat(TokenContext.scope()).isNull();
  }

  @Test
  void anUndeclaredMethodChangesNothing() {
    assertThat(Sections.enter("com.acme.Jobs.other", true)).isNull();
    assertThat(TokenContext.carried()).isNull();
  }

  @Test
  void nestedSectionsOfAnotherLockTakeTheInnermostScopeAndRestoreTheOuterOne() {
    a.holding = true;
    b.holding = true;
    Object outer = Sections.enter("com.acme.Jobs.jobA", true);
    Object inner = Sections.enter("com.acme.Jobs.jobB", true);
    assertThat(TokenContext.scope()).isSameAs(b);
    Sections.exit(inner);
    assertThat(TokenContext.scope()).isSameAs(a);
    Sections.exit(outer);
    assertThat(TokenContext.scope()).isNull();
  }

  @Test
  void aRecursiveEntryReChecksTheLeaseAndIsSkippedAloneWhenItWasLostMeanwhile() {
    a.holding = true;
    Object outer = Sections.enter("com.acme.Jobs.jobA", true);
    a.holding = false; // the lease ended while the outer entry ran
    Object inner = Sections.enter("com.acme.Jobs.jobA", true);
    assertThat(inner).isSameAs(Sections.SKIP);
    Sections.exit(inner);
    assertThat(TokenContext.scope()).as("the outer entry keeps its scope").isSameAs(a);
    Sections.exit(outer);
    assertThat(TokenContext.scope()).isNull();
  }

  @Test
  void anInboundTokenIsNeverAdoptedInsideASectionAndASectionInsideARequestRestoresTheRequestsToken() {
    a.holding = true;
    Object request = TokenContext.enter("upstream", "42");
    Object entered = Sections.enter("com.acme.Jobs.jobA", true);
    assertThat(TokenContext.scope()).isSameAs(a);
    assertThat(TokenContext.current()).as("no inbound decision inside the section").isNull();
    assertThat(TokenContext.enter("other", "43")).as("an inbound token inside a section changes nothing").isNull();
    assertThat(TokenContext.scope()).isSameAs(a);
    Sections.exit(entered);
    assertThat(TokenContext.current().tokenText()).isEqualTo("42");
    TokenContext.exit(request);
    assertThat(TokenContext.carried()).isNull();
  }

  @Test
  void workHandedToAnExecutorInsideASectionRunsInTheSectionsScope() throws Exception {
    a.holding = true;
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Object entered = Sections.enter("com.acme.Jobs.jobA", true);
      Future<LockScope> inTask = pool.submit(TokenContext.wrap((java.util.concurrent.Callable<LockScope>) TokenContext::scope));
      java.util.concurrent.atomic.AtomicReference<LockScope> seen = new java.util.concurrent.atomic.AtomicReference<>();
      Runnable r = TokenContext.wrap((Runnable) () -> seen.set(TokenContext.scope()));
      Sections.exit(entered);
      assertThat(inTask.get(5, TimeUnit.SECONDS)).isSameAs(a);
      pool.submit(r).get(5, TimeUnit.SECONDS);
      assertThat(seen.get()).isSameAs(a);
      assertThat(pool.submit(() -> TokenContext.scope()).get(5, TimeUnit.SECONDS))
          .as("the pool thread is restored after the task").isNull();
    } finally {
      pool.shutdownNow();
    }
  }
}
