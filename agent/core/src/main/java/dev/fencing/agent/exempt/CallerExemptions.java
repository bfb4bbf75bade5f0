package dev.fencing.agent.exempt;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * fencing.exempt.callers (and the built-in callers): code whose writes are not a lock-protected side effect. A schema
 * migration (Flyway, Liquibase) or a session store (Spring Session JDBC) writes to the same database as the
 * application's protected writes, so no destination rule can tell them apart; the code doing the write can.
 *
 * <p>The code doing the write is the <em>calling code</em>: the frame nearest to the side effect, on the calling
 * thread's stack, that only passes a call on (the JDK, a JDBC driver, a pool, an ORM, Spring's data access and HTTP
 * client templates, an HTTP or Kafka client: {@link #PASS_THROUGH}, plus {@code fencing.exempt.pass-through}) skipped.
 * The call is exempt when that frame's class has an exempt prefix. A frame further down never makes it exempt: a
 * framework's filter or entry point (Spring Session's {@code SessionRepositoryFilter} runs below every request) is
 * below the application's own code, which then decides. Walking the stack costs microseconds, so the policy asks only
 * when a side effect would otherwise be blocked: the tagging path (a holder's writes) never pays for it.
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
      "io.micrometer.registry.", // the push registries' own publish code (OtlpMeterRegistry, DatadogMeterRegistry, ...)
      "com.netflix.discovery.", // Eureka client: registration and heartbeat renewals (PUT /eureka/apps/...)
      "com.ecwid.consul.", // Consul client of Spring Cloud Consul: TTL checks (PUT /v1/agent/check/pass/...)
      "org.springframework.cloud.consul.", // Spring Cloud Consul's heartbeat scheduler and registration
      "com.orbitz.consul.", "org.kiwiproject.consul."); // other Consul clients

  /**
   * Code that only passes a side effect on to where it leaves the JVM: skipped when looking for the calling code. Never
   * the application's own code nor a framework's entry point (a filter, a scheduler, a listener container): those
   * decide.
   */
  public static final List<String> PASS_THROUGH = List.of(
      "java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "scala.",
      "dev.fencing.agent.", // the agent's own helpers (advice is inlined into the library's frames)
      // JDBC drivers
      "org.postgresql.", "org.mariadb.jdbc.", "com.mysql.", "org.h2.", "oracle.jdbc.", "com.microsoft.sqlserver.",
      "org.hsqldb.", "org.apache.derby.", "org.sqlite.", "com.ibm.db2.",
      // connection pools and DataSource decorators
      "com.zaxxer.hikari.", "org.apache.commons.dbcp2.", "org.apache.tomcat.jdbc.", "com.mchange.", "io.agroal.",
      "org.vibur.", "com.alibaba.druid.", "net.ttddyy.dsproxy.", "com.p6spy.",
      // data access: templates, transactions, proxies, ORMs, query builders
      "org.springframework.jdbc.", "org.springframework.transaction.", "org.springframework.orm.",
      "org.springframework.dao.", "org.springframework.aop.", "org.springframework.cglib.",
      "org.springframework.data.", "org.hibernate.", "org.eclipse.persistence.", "org.jooq.", "org.apache.ibatis.",
      "org.mybatis.", "org.jdbi.",
      // HTTP clients
      "okhttp3.", "okio.", "org.apache.hc.", "org.apache.http.", "reactor.", "io.netty.", "feign.", "retrofit2.",
      "org.springframework.web.client.", "org.springframework.http.client.",
      "org.springframework.web.reactive.function.client.", "org.eclipse.jetty.client.",
      "org.glassfish.jersey.client.", "io.micrometer.core.ipc.",
      // Kafka
      "org.apache.kafka.clients.", "org.springframework.kafka.core.", "org.springframework.kafka.support.");

  private static final StackWalker WALKER = StackWalker.getInstance();

  private final String[] prefixes;
  private final String[] passThrough;

  /** {@code prefixes} exempt; the built-in {@link #PASS_THROUGH} list is skipped. */
  public CallerExemptions(List<String> prefixes) {
    this(prefixes, List.of());
  }

  /** {@code prefixes} exempt; {@link #PASS_THROUGH} and {@code passThrough} skipped. */
  public CallerExemptions(List<String> prefixes, List<String> passThrough) {
    this.prefixes = prefixes.toArray(new String[0]);
    List<String> skipped = new ArrayList<>(PASS_THROUGH);
    skipped.addAll(passThrough);
    this.passThrough = skipped.toArray(new String[0]);
  }

  /**
   * fencing.exempt.callers, plus {@link #BUILTIN} unless fencing.exempt.builtin=false; fencing.exempt.pass-through
   * added to {@link #PASS_THROUGH}.
   */
  public static CallerExemptions of(List<String> configured, boolean builtin, List<String> passThrough) {
    List<String> all = new ArrayList<>(configured);
    if (builtin) {
      all.addAll(BUILTIN);
    }
    return new CallerExemptions(all, passThrough);
  }

  /** Whether no caller can be exempt (then {@link #onStack()} is never worth asking). */
  public boolean none() {
    return prefixes.length == 0;
  }

  /** Whether the calling code (see the class comment) on the calling thread's stack is exempt. */
  public boolean onStack() {
    return ruleOnStack() >= 0;
  }

  /** The exempt prefixes, in the order {@link #ruleOnStack()} numbers them. */
  public List<String> rules() {
    return List.of(prefixes);
  }

  /** The index in {@link #rules()} of the rule the calling code on the calling thread's stack matches; -1: none. */
  public int ruleOnStack() {
    if (prefixes.length == 0) {
      return -1;
    }
    return WALKER.walk(frames -> callingRule(frames.map(StackWalker.StackFrame::getClassName).iterator()));
  }

  /**
   * Whether the calling code among {@code classNames} (a stack's frames, nearest first) is exempt: the first class that
   * has an exempt prefix or does not pass calls through decides.
   */
  boolean callingCodeExempt(Iterator<String> classNames) {
    return callingRule(classNames) >= 0;
  }

  private int callingRule(Iterator<String> classNames) {
    while (classNames.hasNext()) {
      String c = classNames.next();
      int rule = indexOfPrefix(c, prefixes);
      if (rule >= 0) {
        return rule;
      }
      if (!passesThrough(c)) {
        return -1;
      }
    }
    return -1;
  }

  private static int indexOfPrefix(String className, String[] prefixes) {
    for (int i = 0; i < prefixes.length; i++) {
      if (className.startsWith(prefixes[i])) {
        return i;
      }
    }
    return -1;
  }

  /** Whether a frame of class {@code className} makes the call exempt. */
  boolean exempt(String className) {
    return startsWithAny(className, prefixes);
  }

  /** Whether a frame of class {@code className} only passes the call on. */
  boolean passesThrough(String className) {
    return startsWithAny(className, passThrough);
  }

  private static boolean startsWithAny(String className, String[] prefixes) {
    for (String p : prefixes) {
      if (className.startsWith(p)) {
        return true;
      }
    }
    return false;
  }
}
