package dev.fencing.agent.exempt;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.fixture.Request;
import dev.fencing.agent.exempt.fixture.Migrator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which frames make a call exempt (fencing.exempt.callers, the built-in callers, fencing.exempt.pass-through). */
class CallerExemptionsTest {
  private static final String FIXTURE = "dev.fencing.agent.exempt.fixture.";

  @Test
  void aCallMadeThroughAnExemptPackageIsExemptAndOneMadeAroundItIsNot() {
    CallerExemptions callers = new CallerExemptions(List.of(FIXTURE));
    assertThat(Migrator.run(callers::onStack)).isTrue();
    assertThat(callers.onStack()).isFalse();
  }

  @Test
  void applicationCodeCalledBelowAnExemptFrameIsNotExempt() {
    // A request handled inside an exempt filter (Spring Session's SessionRepositoryFilter is below every request of
    // an app that uses it): the application's code is the calling code, and it is not exempt.
    CallerExemptions callers = new CallerExemptions(List.of(FIXTURE));
    assertThat(Migrator.run(() -> Request.handle(callers::onStack))).isFalse();
    // The exempt code's own call, made after the application's code returned, still is.
    assertThat(Request.handle(() -> Migrator.run(callers::onStack))).isTrue();
  }

  @Test
  void theCallingCodeIsTheNearestFrameThatDoesNotPassCallsOn() {
    CallerExemptions callers = new CallerExemptions(List.of("org.springframework.session."));
    // Spring Session JDBC saving a session at the end of a request: driver, pool, JdbcTemplate, a transaction
    // template, then the session repository (its lambda's frame is the repository class), then the filter, Tomcat.
    assertThat(callers.callingCodeExempt(List.of("org.postgresql.jdbc.PgPreparedStatement",
        "com.zaxxer.hikari.pool.HikariProxyPreparedStatement", "org.springframework.jdbc.core.JdbcTemplate",
        "org.springframework.transaction.support.TransactionTemplate",
        "org.springframework.session.jdbc.JdbcIndexedSessionRepository",
        "org.springframework.session.web.http.SessionRepositoryFilter",
        "org.apache.catalina.core.ApplicationFilterChain", "java.lang.Thread").iterator())).isTrue();
    // The application's insert made for the same request, below the same filter: the controller decides.
    assertThat(callers.callingCodeExempt(List.of("org.postgresql.jdbc.PgPreparedStatement",
        "com.zaxxer.hikari.pool.HikariProxyPreparedStatement", "org.springframework.jdbc.core.JdbcTemplate",
        "com.acme.OrderController", "org.springframework.web.servlet.DispatcherServlet",
        "org.springframework.session.web.http.SessionRepositoryFilter", "java.lang.Thread").iterator())).isFalse();
    // Through Spring Data JPA and Hibernate, at the flush of a transaction the application's proxy commits.
    assertThat(callers.callingCodeExempt(List.of("org.postgresql.jdbc.PgPreparedStatement",
        "org.hibernate.engine.jdbc.internal.ResultSetReturnImpl", "org.springframework.orm.jpa.JpaTransactionManager",
        "org.springframework.transaction.interceptor.TransactionInterceptor",
        "com.acme.OrderService$$SpringCGLIB$$0", "com.acme.OrderController",
        "org.springframework.session.web.http.SessionRepositoryFilter").iterator())).isFalse();
    // Only frames that pass calls on: nothing decides, nothing is exempt.
    assertThat(callers.callingCodeExempt(List.of("okhttp3.RealCall", "java.lang.Thread").iterator())).isFalse();
  }

  @Test
  void configuredPassThroughCodeIsSkippedLikeTheBuiltInList() {
    List<String> stack = List.of("org.postgresql.jdbc.PgStatement", "com.acme.datasource.TracingStatement",
        "liquibase.executor.jvm.JdbcExecutor");
    assertThat(new CallerExemptions(List.of("liquibase.")).callingCodeExempt(stack.iterator())).isFalse();
    assertThat(new CallerExemptions(List.of("liquibase."), List.of("com.acme.datasource."))
        .callingCodeExempt(stack.iterator())).isTrue();
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
    CallerExemptions with = CallerExemptions.of(List.of("org.flywaydb."), true, List.of());
    assertThat(with.exempt("io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter")).isTrue();
    assertThat(with.exempt("zipkin2.reporter.urlconnection.URLConnectionSender")).isTrue();
    assertThat(with.exempt("com.netflix.discovery.DiscoveryClient")).isTrue();
    assertThat(with.exempt("com.ecwid.consul.v1.agent.AgentConsulClient")).isTrue();
    assertThat(with.exempt("io.micrometer.core.instrument.push.PushMeterRegistry")).isTrue();
    assertThat(with.exempt("org.flywaydb.core.Flyway")).isTrue();
    // A push registry publishing through Micrometer's own HTTP sender: the registry is the calling code.
    assertThat(with.callingCodeExempt(List.of("java.net.HttpURLConnection",
        "io.micrometer.core.ipc.http.HttpUrlConnectionSender", "io.micrometer.registry.otlp.OtlpMeterRegistry",
        "io.micrometer.core.instrument.push.PushMeterRegistry").iterator())).isTrue();

    CallerExemptions without = CallerExemptions.of(List.of("org.flywaydb."), false, List.of());
    assertThat(without.exempt("io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter")).isFalse();
    assertThat(without.exempt("com.netflix.discovery.DiscoveryClient")).isFalse();
    assertThat(without.exempt("org.flywaydb.core.Flyway")).isTrue();
  }
}
