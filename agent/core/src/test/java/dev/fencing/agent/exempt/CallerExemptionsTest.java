package dev.fencing.agent.exempt;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.exempt.fixture.Migrator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which frames make a call exempt (fencing.exempt.callers, the built-in callers). */
class CallerExemptionsTest {
  private static final String FIXTURE = "dev.fencing.agent.exempt.fixture.";

  @Test
  void aCallMadeThroughAnExemptPackageIsExemptAndOneMadeAroundItIsNot() {
    CallerExemptions callers = new CallerExemptions(List.of(FIXTURE));
    assertThat(Migrator.run(callers::onStack)).isTrue();
    assertThat(callers.onStack()).isFalse();
  }

  @Test
  void withNoPrefixNothingIsExemptAndTheStackIsNotWalked() {
    CallerExemptions callers = new CallerExemptions(List.of());
    assertThat(callers.none()).isTrue();
    assertThat(Migrator.run(callers::onStack)).isFalse();
  }

  @Test
  void prefixesMatchClassNamesFromTheStart() {
    CallerExemptions callers = new CallerExemptions(List.of("org.flywaydb.", "com.acme.Migrations"));
    assertThat(callers.exempt("org.flywaydb.core.internal.command.DbMigrate")).isTrue();
    assertThat(callers.exempt("com.acme.Migrations")).isTrue();
    assertThat(callers.exempt("com.acme.Migrations$Step")).isTrue();
    assertThat(callers.exempt("com.acme.Payments")).isFalse();
    assertThat(callers.exempt("shaded.org.flywaydb.core.Flyway")).isFalse();
    assertThat(callers.exempt("org.flywaydbx.Other")).isFalse();
  }

  @Test
  void builtInCallersAreTelemetryExportersAndDiscoveryClientsAndCanBeLeftOut() {
    CallerExemptions with = CallerExemptions.of(List.of("org.flywaydb."), true);
    assertThat(with.exempt("io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter")).isTrue();
    assertThat(with.exempt("zipkin2.reporter.urlconnection.URLConnectionSender")).isTrue();
    assertThat(with.exempt("com.netflix.discovery.DiscoveryClient")).isTrue();
    assertThat(with.exempt("com.ecwid.consul.v1.agent.AgentConsulClient")).isTrue();
    assertThat(with.exempt("io.micrometer.core.instrument.push.PushMeterRegistry")).isTrue();
    assertThat(with.exempt("org.flywaydb.core.Flyway")).isTrue();

    CallerExemptions without = CallerExemptions.of(List.of("org.flywaydb."), false);
    assertThat(without.exempt("io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter")).isFalse();
    assertThat(without.exempt("com.netflix.discovery.DiscoveryClient")).isFalse();
    assertThat(without.exempt("org.flywaydb.core.Flyway")).isTrue();
  }
}
