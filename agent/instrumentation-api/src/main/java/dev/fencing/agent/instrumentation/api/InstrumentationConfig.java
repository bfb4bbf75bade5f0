package dev.fencing.agent.instrumentation.api;

import java.time.Duration;
import java.util.List;

/**
 * The settings an instrumentation module may read (the agent's configuration implements it; docs/reference/
 * configuration.md says what each setting means). Values are parsed and valid; lists are never null.
 */
public interface InstrumentationConfig {
  /** The JVM-wide lock's name, or the label of side effects outside every lock scope ("none", "(unset)"). */
  String lock();

  /** fencing.sections, in configuration order. */
  List<SectionSpec> sections();

  /** fencing.fenced.jdbc: JDBC URL prefixes of databases configured as fenced. */
  List<String> fencedJdbc();

  /** fencing.exempt.jdbc: JDBC URL prefixes that are never a lock-protected side effect. */
  List<String> exemptJdbc();

  /** fencing.jdbc.pooler. */
  JdbcPooler jdbcPooler();

  /** fencing.jdbc.write-functions: database functions declared as writing. */
  List<String> jdbcWriteFunctions();

  /** fencing.jdbc.idle-in-transaction-timeout; zero: leave the database's setting. */
  Duration jdbcIdleInTransactionTimeout();

  /** fencing.fenced.http: host:port or host. */
  List<String> fencedHttp();

  /** fencing.exempt.http: host, host:port, *.suffix[:port]. */
  List<String> exemptHttp();

  /** fencing.unsafe-http-methods, upper case. */
  List<String> unsafeHttpMethods();

  /** fencing.fenced.kafka: exact topic names and globs. */
  List<String> fencedKafka();

  /** fencing.exempt.kafka: topic names and globs. */
  List<String> exemptKafka();

  /** fencing.shedlock.enabled: ShedLock's tasks run as scopes of the agent's lock of their name. */
  default boolean shedLockEnabled() {
    return false;
  }

  /** fencing.quartz.jobs is set: the declared Quartz jobs run as scopes of agent locks. */
  default boolean quartzJobsDeclared() {
    return false;
  }
}
