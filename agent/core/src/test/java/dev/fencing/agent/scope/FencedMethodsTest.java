package dev.fencing.agent.scope;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FencingApi;
import dev.fencing.agent.bootstrap.Sections;
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

/** Methods annotated @Fenced: sections of their lock, campaigned for once, the configuration's locks reused. */
class FencedMethodsTest {
  @TempDir
  Path stateDir;

  private final List<String> campaigns = new ArrayList<>();
  private Scopes scopes;

  @AfterEach
  void clean() {
    FencingApi.install(null);
    Sections.install(Map.of());
    TokenContext.exit(new Object());
  }

  /** The agent started with {@code args}; every campaign grants {@code token} at once. */
  private AgentConfig start(String args, long token) {
    AgentConfig config = ConfigLoader.load("state.dir=" + stateDir + "," + args, new Properties(), Map.of());
    scopes = Scopes.of(config);
    Fencing.install(scopes.gate());
    Sections.install(scopes.sectionTable());
    FencingApi.install(new FencedMethods(config, scopes, "etcd", lock -> {
      campaigns.add(lock.lock());
      if (token > 0) {
        lock.state().granted(token, 0x2a, 1, System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
      }
      return () -> {};
    }));
    return config;
  }

  private static Decision inSection(String origin, boolean isVoid) {
    Object entered = Sections.enter(origin, isVoid);
    try {
      return entered == Sections.SKIP ? null : Fencing.decide(Channel.JDBC, true, true);
    } finally {
      Sections.exit(entered);
    }
  }

  @Test
  void annotatedMethodsAreSectionsOfTheirLockWhichIsCampaignedForOnce() {
    AgentConfig config = start("sections.annotated=true,etcd.endpoints=http://127.0.0.1:1", 41);
    assertThat(config.problems()).as("no fencing.lock needed").isEmpty();
    assertThat(Fencing.decide(Channel.JDBC, true, true).isTag()).as("outside: no JVM-wide lock").isFalse();
    FencingApi.fenced("com.acme.Orders.settle", "orders");
    FencingApi.fenced("com.acme.Orders.report", "orders");
    FencingApi.fenced("com.acme.Orders.settle", "orders"); // the class defined again (another loader)
    assertThat(campaigns).containsExactly("orders");
    Decision d = inSection("com.acme.Orders.settle", true);
    assertThat(d.lock()).isEqualTo("orders");
    assertThat(d.token()).isEqualTo(41);
    assertThat(d.grant()).isEqualTo("2a");
    assertThat(inSection("com.acme.Orders.report", false).token()).isEqualTo(41);
    assertThat(FencingApi.current()).as("outside every section").isNull();
    assertThat(scopes.captured().locks()).extracting(c -> c.library() + " " + c.runtime().lock())
        .containsExactly("fenced orders");
  }

  @Test
  void aVoidMethodIsSkippedWhileTheLockIsNotHeld() {
    start("sections.annotated=true,etcd.endpoints=http://127.0.0.1:1", 0);
    FencingApi.fenced("com.acme.Orders.settle", "orders");
    assertThat(Sections.enter("com.acme.Orders.settle", true)).isSameAs(Sections.SKIP);
    Decision d = inSection("com.acme.Orders.report", false);
    assertThat(d).as("not annotated: no section").isNotNull();
    FencingApi.fenced("com.acme.Orders.report", "orders");
    assertThat(inSection("com.acme.Orders.report", false).isBlock()).as("refused as on standby").isTrue();
  }

  @Test
  void aLockOfTheConfigurationKeepsItsRuntimeAndItsSectionsWin() {
    start("lock=ledger,sections=com.acme.Jobs#run@reports,etcd.endpoints=http://127.0.0.1:1", 41);
    FencingApi.fenced("com.acme.Orders.settle", "ledger");
    FencingApi.fenced("com.acme.Orders.report", "reports");
    FencingApi.fenced("com.acme.Jobs.run", "orders");
    assertThat(campaigns).as("the configuration's locks campaign since start").isEmpty();
    assertThat(Sections.scopeOf("com.acme.Orders.settle").lock()).isEqualTo("ledger");
    assertThat(Sections.scopeOf("com.acme.Orders.report").lock()).isEqualTo("reports");
    assertThat(Sections.scopeOf("com.acme.Jobs.run").lock()).as("fencing.sections wins").isEqualTo("reports");
  }

  @Test
  void anInvalidLockNameOrNoLeaseLeavesTheMethodAlone() {
    start("sections.annotated=true,etcd.endpoints=http://127.0.0.1:1", 41);
    FencingApi.fenced("com.acme.Orders.settle", "not a lock");
    FencingApi.fenced("com.acme.Orders.report", "");
    assertThat(Sections.scopeOf("com.acme.Orders.settle")).isNull();
    assertThat(Sections.scopeOf("com.acme.Orders.report")).isNull();
    clean();
    start("lease.enabled=false", 41);
    FencingApi.fenced("com.acme.Orders.settle", "orders");
    assertThat(Sections.scopeOf("com.acme.Orders.settle")).isNull();
    assertThat(campaigns).isEmpty();
  }

  @Test
  void withoutTheSwitchAJvmWithNoLockStillNeedsFencingLock() {
    AgentConfig config = ConfigLoader.load("etcd.endpoints=http://127.0.0.1:1", new Properties(), Map.of());
    assertThat(config.problems()).anyMatch(p -> p.startsWith("fencing.lock is not set"));
  }
}
