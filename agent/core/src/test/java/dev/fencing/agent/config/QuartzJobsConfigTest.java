package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** fencing.quartz.jobs: which jobs run under which lock, and what a bad entry is told. */
class QuartzJobsConfigTest {
  private static AgentConfig load(String args) {
    return ConfigLoader.load(args, new Properties(), Map.of());
  }

  @Test
  void patternsMatchTheJobKeyOrTheJobClassTheFirstEntryDecidingAndTheLockDefaultsToTheKey() {
    QuartzJobRules rules = load("quartz.jobs=billing.settle,com.acme.jobs.*@ledger,*.nightly@reports").quartzJobs();
    assertThat(rules.lockFor("billing.settle", "com.acme.jobs.SettleJob")).isEqualTo("billing.settle");
    assertThat(rules.lockFor("DEFAULT.x", "com.acme.jobs.SettleJob")).isEqualTo("ledger");
    assertThat(rules.lockFor("reports.nightly", "com.acme.ReportJob")).isEqualTo("reports");
    assertThat(rules.lockFor("reports.weekly", "com.acme.ReportJob")).isNull();
    assertThat(rules.lockFor("billingXsettle", "x")).as("a dot is a dot").isNull();
    assertThat(rules).hasToString("billing.settle,com.acme.jobs.*@ledger,*.nightly@reports");
  }

  @Test
  void declaredJobsNeedNoJvmWideLockAndNothingIsDeclaredByDefault() {
    AgentConfig config = load("quartz.jobs=billing.settle");
    assertThat(config.problems()).isEmpty();
    assertThat(config.quartzJobsDeclared()).isTrue();
    assertThat(config.lock()).isEqualTo("none");
    assertThat(config.quartzWait()).hasSeconds(30);
    assertThat(load("lock=x").quartzJobsDeclared()).isFalse();
  }

  @Test
  void aBadEntryIsAProblemNamingItAndTheForm() {
    assertThat(load("quartz.jobs=billing.settle@bad/lock").problems()).singleElement().asString()
        .contains("fencing.quartz.jobs").contains("'billing.settle@bad/lock'").contains("the lock 'bad/lock'")
        .contains("<job key or job class pattern>[@<lock>]");
    assertThat(load("quartz.jobs=@ledger").problems()).singleElement().asString().contains("'@ledger' is not one");
  }
}
