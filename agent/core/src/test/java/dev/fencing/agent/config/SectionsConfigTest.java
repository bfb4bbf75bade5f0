package dev.fencing.agent.config;

import dev.fencing.agent.instrumentation.api.SectionSpec;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** fencing.sections: the spec parser, its errors, and how it makes fencing.lock optional. */
class SectionsConfigTest {
  private static AgentConfig load(String agentArgs) {
    return ConfigLoader.load(agentArgs, new Properties(), Map.of());
  }

  @Test
  void sectionsAreParsedInOrderAndMakeTheJvmWideLockOptional() {
    AgentConfig c = load("sections=com.acme.Reports#nightly@reports,com.acme.Ledger$Job#settle@ledger");
    assertThat(c.problems()).isEmpty();
    assertThat(c.sections()).containsExactly(new SectionSpec("com.acme.Reports", "nightly", "reports"),
        new SectionSpec("com.acme.Ledger$Job", "settle", "ledger"));
    assertThat(c.sections().get(1).origin()).isEqualTo("com.acme.Ledger$Job.settle");
    assertThat(c.jvmWideLock()).isFalse();
    assertThat(c.lock()).isEqualTo("none");
    assertThat(c.locks()).containsExactly("reports", "ledger");
  }

  @Test
  void theJvmWideLockComesFirstAndEachLockOnce() {
    AgentConfig c = load("lock=main,sections=a.B#x@l1,a.B#y@l1,a.C#z@main");
    assertThat(c.locks()).containsExactly("main", "l1");
    assertThat(c.jvmWideLock()).isTrue();
  }

  @Test
  void fromASystemPropertyToo() {
    Properties p = new Properties();
    p.setProperty("fencing.sections", " a.B#x@l1 , a.B#y@l2 ");
    assertThat(ConfigLoader.load(null, p, Map.of()).locks()).containsExactly("l1", "l2");
  }

  @Test
  void aBadEntryIsOneProblemNamingTheEntryAndTheExpectedForm() {
    for (String bad : List.of("com.acme.Jobs", "com.acme.Jobs#run", "com.acme.Jobs@l", "#run@l", "com.acme.Jobs#@l",
        "com.acme.Jobs#run@", "com..Jobs#run@l", "com.acme.Jobs#ru-n@l", "com.acme.Jobs#run@bad lock")) {
      AgentConfig c = load("sections=a.B#ok@l1," + bad);
      assertThat(c.valid()).as(bad).isFalse();
      assertThat(c.problems()).as(bad).hasSize(1);
      assertThat(c.problems().get(0)).as(bad).contains("fencing.sections=", "'" + bad.trim() + "'",
          "<fully.qualified.Class>#<method>@<lock>");
    }
  }

  @Test
  void aMethodDeclaredForTwoLocksIsAProblem() {
    AgentConfig c = load("sections=a.B#run@l1,a.B#run@l2");
    assertThat(c.problems()).hasSize(1);
    assertThat(c.problems().get(0)).contains("a.B#run is already a section of lock 'l1'");
    assertThat(load("sections=a.B#run@l1,a.B#run@l1").problems()).as("the same entry twice is fine").isEmpty();
  }

  @Test
  void sectionsNeedALease() {
    AgentConfig c = load("lease.enabled=false,sections=a.B#run@l1");
    assertThat(c.problems()).hasSize(1);
    assertThat(c.problems().get(0)).contains("fencing.sections", "fencing.lease.enabled=false");
  }

  @Test
  void withNeitherLockNorSectionsTheLockIsStillRequired() {
    AgentConfig c = load(null);
    assertThat(c.problems()).anyMatch(p -> p.contains("fencing.lock is not set") && p.contains("fencing.sections"));
  }
}
