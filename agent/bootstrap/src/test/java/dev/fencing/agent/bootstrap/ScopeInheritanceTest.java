package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A thread started inside a lock scope carries it while the entry it was started in lasts, and never after. */
class ScopeInheritanceTest {
  private final SectionsTest.TestScope a = new SectionsTest.TestScope("lock-a");
  private final SectionsTest.TestScope b = new SectionsTest.TestScope("lock-b");

  ScopeInheritanceTest() {
    a.holding = true;
    b.holding = true;
    Sections.install(Map.of("com.acme.Jobs.jobA", a, "com.acme.Jobs.jobB", b));
  }

  @AfterEach
  void clean() {
    TokenContext.exit(new Object());
    Sections.install(Map.of());
  }

  /** A thread that reports what is current on it each time it is asked (one permit per question). */
  private static final class Probe {
    final java.util.concurrent.SynchronousQueue<Boolean> ask = new java.util.concurrent.SynchronousQueue<>();
    final java.util.concurrent.SynchronousQueue<Object> answer = new java.util.concurrent.SynchronousQueue<>();
    final Thread thread = new Thread(() -> {
      try {
        while (ask.take()) {
          Object c = TokenContext.carried();
          answer.put(c == null ? "none" : c);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });

    Probe() {
      thread.setDaemon(true);
      thread.start();
    }

    Object carried() throws InterruptedException {
      ask.put(true);
      return answer.poll(5, TimeUnit.SECONDS);
    }

    void stop() throws InterruptedException {
      ask.put(false);
      thread.join(5000);
    }
  }

  @Test
  void aThreadStartedInASectionCarriesItUntilTheSectionReturns() throws Exception {
    Object entered = Sections.enter("com.acme.Jobs.jobA", true);
    Probe p = new Probe();
    assertThat(p.carried()).as("while the section runs").isSameAs(a);
    Sections.exit(entered);
    assertThat(p.carried()).as("after the section returned: outside every scope").isEqualTo("none");
    Object again = Sections.enter("com.acme.Jobs.jobA", true);
    assertThat(p.carried()).as("a later entry of the same section is not the one it was started in")
        .isEqualTo("none");
    Sections.exit(again);
    p.stop();
  }

  @Test
  void aThreadStartedInANestedSectionCarriesTheInnerOneUntilItReturnsThenNothing() throws Exception {
    Object outer = Sections.enter("com.acme.Jobs.jobA", true);
    Object inner = Sections.enter("com.acme.Jobs.jobB", true);
    Probe p = new Probe();
    assertThat(p.carried()).isSameAs(b);
    Sections.exit(inner);
    assertThat(p.carried()).as("the inner entry it was started in ended").isEqualTo("none");
    Probe q = new Probe();
    assertThat(q.carried()).as("started in the outer section").isSameAs(a);
    Sections.exit(outer);
    assertThat(q.carried()).isEqualTo("none");
    p.stop();
    q.stop();
  }

  @Test
  void aThreadStartedByAnInheritingThreadIsBoundToTheSameEntry() throws Exception {
    Object entered = Sections.enter("com.acme.Jobs.jobA", true);
    AtomicReference<Probe> grandchild = new AtomicReference<>();
    Thread child = new Thread(() -> grandchild.set(new Probe()));
    child.start();
    child.join();
    assertThat(grandchild.get().carried()).isSameAs(a);
    Sections.exit(entered);
    assertThat(grandchild.get().carried()).isEqualTo("none");
    grandchild.get().stop();
  }

  @Test
  void threadsStartedOutsideScopesOrUnderAnInboundTokenInheritNothing() throws Exception {
    Probe outside = new Probe();
    assertThat(outside.carried()).isEqualTo("none");
    Object request = TokenContext.enter("orders", "42");
    Probe underToken = new Probe();
    assertThat(underToken.carried()).as("an inbound token stays with its request").isEqualTo("none");
    TokenContext.exit(request);
    outside.stop();
    underToken.stop();
  }

  @Test
  void aForkJoinWorkerCreatedInsideASectionDoesNotTakeIt() throws Exception {
    Object entered = Sections.enter("com.acme.Jobs.jobA", true);
    ForkJoinPool pool = new ForkJoinPool(1);
    try {
      CountDownLatch done = new CountDownLatch(1);
      AtomicReference<Object> seen = new AtomicReference<>();
      pool.execute(() -> {
        // not wrapped here (no agent): the worker, created inside the section, runs it with what it inherited
        seen.set(TokenContext.carried() == null ? "none" : TokenContext.carried());
        done.countDown();
      });
      assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(seen.get()).isEqualTo("none");
    } finally {
      pool.shutdownNow();
      Sections.exit(entered);
    }
  }

  @Test
  void aPooledThreadStartingItsNextTaskVoidsWhatItsThreadsInherited() throws Exception {
    Object entered = TokenContext.enterScope(a); // a captured lock's entry, released on another thread
    Probe p = new Probe();
    assertThat(p.carried()).isSameAs(a);
    TokenContext.taskStarting();
    assertThat(p.carried()).isEqualTo("none");
    assertThat(TokenContext.carried()).isNull();
    p.stop();
    TokenContext.exit(entered);
  }

  @Test
  void libraryThreadKindsDoNotTakeAnInheritedScope() {
    assertThat(ScopeEntries.Inherited.takes(new Thread())).isTrue();
    assertThat(ScopeEntries.Inherited.takes(new Thread() {
    })).as("an application's own Thread subclass").isTrue();
  }
}
