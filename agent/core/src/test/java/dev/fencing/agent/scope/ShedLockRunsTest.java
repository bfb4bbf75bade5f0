package dev.fencing.agent.scope;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.ShedLockNotFencedException;
import dev.fencing.agent.bootstrap.ShedLocks;
import dev.fencing.agent.bootstrap.TokenContext;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ShedLock's runs: the agent's lock taken on entry, its scope on the task's thread, given back at the end. */
class ShedLockRunsTest {
  @TempDir
  Path stateDir;

  private final List<String> campaigns = new ArrayList<>();

  @AfterEach
  void leave() {
    ShedLocks.install(null);
    TokenContext.exit(new Object());
  }

  private ShedLockRuns runs(String args, long token) {
    AgentConfig config = ConfigLoader.load("shedlock.enabled=true,state.dir=" + stateDir + "," + args,
        new Properties(), Map.of());
    assertThat(config.problems()).isEmpty();
    Scopes s = Scopes.of(config);
    Fencing.install(s.gate());
    ShedLockRuns runs = new ShedLockRuns(config, s.captured(), "etcd", lock -> {
      campaigns.add("start " + lock.lock());
      dev.fencing.agent.token.Grant g = token > 0
          ? lock.state().granted(token, 7, 1, System.nanoTime() + TimeUnit.SECONDS.toNanos(10)) : null;
      return () -> {
        campaigns.add("close " + lock.lock());
        if (g != null) {
          lock.state().released(g, "released");
        }
      };
    });
    ShedLocks.install(runs);
    return runs;
  }

  @Test
  void theTaskRunsInTheScopeOfTheAgentsLockOfItsNameWhichIsGivenBackAtTheEnd() {
    runs("", 41);
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).as("outside the run").isEqualTo("none");
    ShedLocks.started("settle", true);
    Decision d = Fencing.decide(Channel.JDBC, true, true);
    assertThat(d.lock()).isEqualTo("settle");
    assertThat(d.isTag()).isTrue();
    assertThat(d.token()).isEqualTo(41);
    ShedLocks.ended();
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("none");
    assertThat(campaigns).containsExactly("start settle", "close settle");
  }

  @Test
  void aLockNotHeldWithinTheWaitFailsTheTaskAndIsGivenBack() {
    ShedLockRuns runs = runs("shedlock.wait=50ms", 0);
    assertThatThrownBy(() -> ShedLocks.started("settle", true)).isInstanceOf(ShedLockNotFencedException.class)
        .hasMessageContaining("'settle'").hasMessageContaining("fencing.shedlock.wait");
    assertThat(runs.refusedCount()).isEqualTo(1);
    assertThat(campaigns).containsExactly("start settle", "close settle");
    ShedLocks.ended(); // ShedLock's finally block: nothing left to undo
    assertThat(campaigns).hasSize(2);
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("none");
  }

  @Test
  void observeModeRunsTheTaskAllTheSame() {
    runs("mode=observe,shedlock.wait=20ms", 0);
    ShedLocks.started("settle", true);
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("settle");
    ShedLocks.ended();
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("none");
  }

  @Test
  void shedLocksTestHelperNameAndAMissingHookChangeNothing() {
    runs("", 41);
    ShedLocks.started("net.javacrumbs.shedlock.core.test-lock", false);
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("none");
    ShedLocks.ended();
    ShedLocks.install(null);
    ShedLocks.started("settle", true);
    ShedLocks.ended();
    assertThat(campaigns).isEmpty();
  }
}
