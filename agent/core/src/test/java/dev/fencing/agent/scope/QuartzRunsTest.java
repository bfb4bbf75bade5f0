package dev.fencing.agent.scope;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.QuartzJobNotFencedException;
import dev.fencing.agent.bootstrap.QuartzJobs;
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

/** Declared Quartz jobs: the agent's lock taken when the job starts, its scope on the job's thread, given back after. */
class QuartzRunsTest {
  @TempDir
  Path stateDir;

  private final List<String> campaigns = new ArrayList<>();

  @AfterEach
  void leave() {
    QuartzJobs.install(null);
    TokenContext.exit(new Object());
  }

  private QuartzRuns runs(String args, long token) {
    AgentConfig config = ConfigLoader.load("state.dir=" + stateDir + "," + args, new Properties(), Map.of());
    assertThat(config.problems()).isEmpty();
    Scopes s = Scopes.of(config);
    Fencing.install(s.gate());
    QuartzRuns runs = new QuartzRuns(config, s.captured(), "etcd", lock -> {
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
    QuartzJobs.install(runs);
    return runs;
  }

  @Test
  void aDeclaredJobRunsInTheScopeOfTheLockNamedAfterItsKeyWhichIsGivenBackAtTheEnd() {
    runs("quartz.jobs=billing.settle", 41);
    Object context = new Object();
    Object run = QuartzJobs.started(context, "billing.settle", "com.acme.SettleJob");
    Decision d = Fencing.decide(Channel.JDBC, true, true);
    assertThat(d.lock()).isEqualTo("billing.settle");
    assertThat(d.isTag()).isTrue();
    assertThat(d.token()).isEqualTo(41);
    QuartzJobs.ended(run);
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("none");
    assertThat(campaigns).containsExactly("start billing.settle", "close billing.settle");
  }

  @Test
  void aJobMatchedByItsClassRunsUnderTheLockItsEntryNames() {
    runs("quartz.jobs=com.acme.jobs.*@ledger", 41);
    Object run = QuartzJobs.started(new Object(), "DEFAULT.a", "com.acme.jobs.SettleJob");
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("ledger");
    QuartzJobs.ended(run);
    assertThat(campaigns).containsExactly("start ledger", "close ledger");
  }

  @Test
  void aJobNotDeclaredIsLeftAlone() {
    runs("quartz.jobs=billing.*", 41);
    Object run = QuartzJobs.started(new Object(), "reports.nightly", "com.acme.ReportJob");
    assertThat(run).isNull();
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("none");
    QuartzJobs.ended(run);
    assertThat(campaigns).isEmpty();
  }

  @Test
  void aSuperClassesExecuteWithTheSameContextIsTheSameRun() {
    runs("quartz.jobs=billing.settle", 41);
    Object context = new Object();
    Object outer = QuartzJobs.started(context, "billing.settle", "com.acme.SettleJob");
    Object inner = QuartzJobs.started(context, "billing.settle", "com.acme.SettleJob");
    assertThat(inner).isNull();
    QuartzJobs.ended(inner);
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("billing.settle");
    QuartzJobs.ended(outer);
    assertThat(campaigns).containsExactly("start billing.settle", "close billing.settle");
  }

  @Test
  void aLockNotHeldWithinTheWaitFailsTheJobAndIsGivenBack() {
    QuartzRuns runs = runs("quartz.jobs=billing.settle,quartz.wait=50ms", 0);
    Object context = new Object();
    assertThatThrownBy(() -> QuartzJobs.started(context, "billing.settle", "com.acme.SettleJob"))
        .isInstanceOf(QuartzJobNotFencedException.class).hasMessageContaining("Quartz job 'billing.settle'")
        .hasMessageContaining("fencing.quartz.wait");
    assertThat(runs.refusedCount()).isEqualTo(1);
    assertThat(campaigns).containsExactly("start billing.settle", "close billing.settle");
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("none");
    // the next run of the job on this thread is not taken for a nested one
    assertThatThrownBy(() -> QuartzJobs.started(context, "billing.settle", "com.acme.SettleJob"))
        .isInstanceOf(QuartzJobNotFencedException.class);
  }

  @Test
  void observeModeRunsTheJobAllTheSame() {
    runs("mode=observe,quartz.jobs=billing.settle,quartz.wait=20ms", 0);
    Object run = QuartzJobs.started(new Object(), "billing.settle", "com.acme.SettleJob");
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("billing.settle");
    QuartzJobs.ended(run);
    assertThat(Fencing.decide(Channel.JDBC, true, true).lock()).isEqualTo("none");
  }
}
