package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** fencing.exempt.*: forms, defaults, and what an invalid value does. */
class ExemptConfigTest {
  private static AgentConfig load(String args) {
    return ConfigLoader.load(args, new Properties(), Map.of());
  }

  @Test
  void byDefaultNoDestinationIsExemptAndMigrationAndSessionToolingAreExemptCallers() {
    AgentConfig c = load("lock=ledger");
    assertThat(c.exemptJdbc()).isEmpty();
    assertThat(c.exemptHttp()).isEmpty();
    assertThat(c.exemptKafka()).isEmpty();
    assertThat(c.exemptCallers()).containsExactly("org.flywaydb.", "liquibase.", "org.springframework.session.");
    assertThat(c.exemptBuiltin()).isTrue();
  }

  @Test
  void destinationsAndCallersAreReadAsLists() {
    AgentConfig c = load("lock=ledger,exempt.jdbc=jdbc:postgresql://metrics/,exempt.http=collector:4318,"
        + "*.monitoring.svc,[::1]:9000,exempt.kafka=telemetry-*,heartbeats,exempt.callers=com.acme.Migrations,"
        + "org.flywaydb.,exempt.builtin=false");
    assertThat(c.problems()).isEmpty();
    assertThat(c.exemptJdbc()).containsExactly("jdbc:postgresql://metrics/");
    assertThat(c.exemptHttp()).containsExactly("collector:4318", "*.monitoring.svc", "[::1]:9000");
    assertThat(c.exemptKafka()).containsExactly("telemetry-*", "heartbeats");
    assertThat(c.exemptCallers()).containsExactly("com.acme.Migrations", "org.flywaydb.");
    assertThat(c.exemptBuiltin()).isFalse();
  }

  @Test
  void noneMakesNoCallerExempt() {
    assertThat(load("lock=ledger,exempt.callers=none").exemptCallers()).isEmpty();
  }

  @Test
  void aBareStarOrAPathIsNoHostAndInvalidatesTheList() {
    for (String bad : new String[] {"*", "collector:4318/v1/traces", "http://collector"}) {
      AgentConfig c = load("lock=ledger,exempt.http=ok.host," + bad);
      assertThat(c.problems()).as(bad).singleElement().asString()
          .contains("fencing.exempt.http", "host, host:port or *.suffix");
      assertThat(c.exemptHttp()).as("nothing exempt when the list is invalid").isEmpty();
    }
  }

  @Test
  void aCallerThatIsNoPackageNameIsAProblem() {
    AgentConfig c = load("lock=ledger,exempt.callers=org/flywaydb");
    assertThat(c.problems()).singleElement().asString().contains("fencing.exempt.callers", "Java package prefixes");
    assertThat(c.exemptCallers()).containsExactly("org.flywaydb.", "liquibase.", "org.springframework.session.");
  }
}
