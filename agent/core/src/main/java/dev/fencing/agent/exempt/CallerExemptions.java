package dev.fencing.agent.exempt;

import java.util.ArrayList;
import java.util.List;

/**
 * fencing.exempt.callers (and the built-in callers): code whose writes are not a lock-protected side effect, found on
 * the calling thread's stack. A schema migration (Flyway, Liquibase) or a session store (Spring Session JDBC) writes to
 * the same database as the application's protected writes, so no destination rule can tell them apart; the code doing
 * the write can. Walking the stack costs microseconds, so the policy asks only when a side effect would otherwise be
 * blocked: the tagging path (a holder's writes) never pays for it.
 */
public final class CallerExemptions {
  /**
   * Telemetry exporters and service-discovery clients: their requests report on or announce this JVM, they change
   * nothing a lock protects, and blocking them on a standby would make the standby look dead to its monitoring and to
   * its load balancer. Recognised by their packages rather than by ports or paths: a port (4318) or a path
   * (/api/v2/spans) names no sender, and another service may listen there.
   */
  public static final List<String> BUILTIN = List.of(
      "io.opentelemetry.exporter.", // OpenTelemetry SDK exporters (OTLP gRPC/HTTP, Zipkin), also in the OTel Java agent
      "zipkin2.reporter.", // Zipkin reporter (Brave, Micrometer Tracing)
      "io.jaegertracing.", // Jaeger client
      "io.micrometer.core.instrument.push.", // Micrometer push registries (OTLP, Datadog, Influx, ...) publishing
      "com.netflix.discovery.", // Eureka client: registration and heartbeat renewals (PUT /eureka/apps/...)
      "com.ecwid.consul.", // Consul client of Spring Cloud Consul: TTL checks (PUT /v1/agent/check/pass/...)
      "org.springframework.cloud.consul.", // Spring Cloud Consul's heartbeat scheduler and registration
      "com.orbitz.consul.", "org.kiwiproject.consul."); // other Consul clients

  private static final StackWalker WALKER = StackWalker.getInstance();

  private final String[] prefixes;

  public CallerExemptions(List<String> prefixes) {
    this.prefixes = prefixes.toArray(new String[0]);
  }

  /** fencing.exempt.callers, plus {@link #BUILTIN} unless fencing.exempt.builtin=false. */
  public static CallerExemptions of(List<String> configured, boolean builtin) {
    List<String> all = new ArrayList<>(configured);
    if (builtin) {
      all.addAll(BUILTIN);
    }
    return new CallerExemptions(all);
  }

  /** Whether no caller can be exempt (then {@link #onStack()} is never worth asking). */
  public boolean none() {
    return prefixes.length == 0;
  }

  /** Whether a class whose name starts with one of the prefixes is on the calling thread's stack. */
  public boolean onStack() {
    if (prefixes.length == 0) {
      return false;
    }
    return WALKER.walk(frames -> frames.anyMatch(f -> exempt(f.getClassName())));
  }

  /** Whether a frame of class {@code className} makes the call exempt. */
  boolean exempt(String className) {
    for (String p : prefixes) {
      if (className.startsWith(p)) {
        return true;
      }
    }
    return false;
  }
}
