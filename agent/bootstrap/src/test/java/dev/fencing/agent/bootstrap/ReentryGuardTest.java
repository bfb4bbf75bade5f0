package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ReentryGuardTest {
  @AfterEach
  void leaveAllHooks() {
    for (int i = 0; i < 10; i++) {
      ReentryGuard.exit();
    }
  }

  /** Starts {@code thread}, waits for it, and returns what it stored in {@code result}. */
  private static boolean runOn(Thread thread, AtomicBoolean result) throws InterruptedException {
    thread.start();
    thread.join();
    return result.get();
  }

  @Test
  void outermostEnterIsTheOneThatActs() {
    assertThat(ReentryGuard.enter()).isTrue();
    assertThat(ReentryGuard.enter()).isFalse();
    assertThat(ReentryGuard.enter()).isFalse();
  }

  /** enterThread counts as enter does, and tells the outermost hook by its state. */
  @Test
  void enterThreadSharesTheDepthWithEnter() {
    ReentryGuard.HookThread t = ReentryGuard.enterThread();
    assertThat(t.outermost()).isTrue();
    assertThat(ReentryGuard.enter()).isFalse();
    assertThat(ReentryGuard.enterThread().outermost()).isFalse();
    ReentryGuard.exit();
    ReentryGuard.exit();
    ReentryGuard.exit();
    assertThat(ReentryGuard.enterThread()).isSameAs(t);
    assertThat(t.outermost()).isTrue();
    ReentryGuard.exit();
    assertThat(ReentryGuard.enter()).isTrue();
  }

  @Test
  void afterExitingAllLevelsTheNextEnterIsOutermostAgain() {
    ReentryGuard.enter();
    ReentryGuard.enter();
    ReentryGuard.exit();
    assertThat(ReentryGuard.enter()).isFalse();
    ReentryGuard.exit();
    ReentryGuard.exit();

    assertThat(ReentryGuard.enter()).isTrue();
  }

  @Test
  void extraExitDoesNotUnderflow() {
    ReentryGuard.exit();
    ReentryGuard.exit();

    assertThat(ReentryGuard.enter()).isTrue();
    assertThat(ReentryGuard.enter()).isFalse();
  }

  @Test
  void nestingIsPerThread() throws InterruptedException {
    ReentryGuard.enter();
    AtomicBoolean outermostThere = new AtomicBoolean();

    boolean outermost = runOn(new Thread(() -> outermostThere.set(ReentryGuard.enter())), outermostThere);

    assertThat(outermost).isTrue();
  }

  @Test
  void applicationThreadsAreNotAgentThreads() throws InterruptedException {
    AtomicBoolean agent = new AtomicBoolean(true);

    assertThat(ReentryGuard.isAgentThread()).isFalse();
    assertThat(runOn(new Thread(() -> agent.set(ReentryGuard.isAgentThread())), agent)).isFalse();
  }

  @Test
  void agentThreadIsRecognised() throws InterruptedException {
    AtomicBoolean agent = new AtomicBoolean();

    assertThat(runOn(new AgentThread(() -> agent.set(ReentryGuard.isAgentThread()), "fencing-test", null), agent)).isTrue();
  }

  @Test
  void agentThreadsAreDaemons() {
    assertThat(new AgentThread(() -> { }, "fencing-test", null).isDaemon()).isTrue();
  }
}
