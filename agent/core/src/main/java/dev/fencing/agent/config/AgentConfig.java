package dev.fencing.agent.config;

import dev.fencing.agent.instrumentation.api.InstrumentationConfig;
import dev.fencing.agent.instrumentation.api.JdbcPooler;
import dev.fencing.agent.instrumentation.api.SectionSpec;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The agent's parsed configuration. Built by {@link ConfigLoader}; immutable. */
public final class AgentConfig implements InstrumentationConfig {
  public enum Standby { BLOCK, WAIT }
  public enum Mode { ENFORCE, OBSERVE }
  public enum FailMode { CLOSED, OPEN }
  public enum ExpiredFenced { TAG, BLOCK }

  /** fencing.coordinator: where the lock and its token come from. */
  public enum Coordinator { ETCD, ZOOKEEPER }

  private final Map<ConfigKey, Object> values;
  private final Map<String, Boolean> instrumentations;
  private final Map<String, String> sources;
  private final List<String> problems;
  private final List<String> warnings;

  AgentConfig(Map<ConfigKey, Object> values, Map<String, Boolean> instrumentations, Map<String, String> sources,
      List<String> problems) {
    this(values, instrumentations, sources, problems, List.of());
  }

  AgentConfig(Map<ConfigKey, Object> values, Map<String, Boolean> instrumentations, Map<String, String> sources,
      List<String> problems, List<String> warnings) {
    this.values = values;
    this.instrumentations = instrumentations;
    this.sources = sources;
    this.problems = List.copyOf(problems);
    this.warnings = List.copyOf(warnings);
  }

  /** One line per unknown key or FENCING_* variable (ignored): logged as warnings, never a failure. */
  public List<String> warnings() {
    return warnings;
  }

  /** One line per invalid or unknown setting, naming the key, the value and the expected form. Empty when valid. */
  public List<String> problems() {
    return problems;
  }

  public boolean valid() {
    return problems.isEmpty();
  }

  @SuppressWarnings("unchecked")
  private <T> T get(ConfigKey key) {
    return (T) values.get(key);
  }

  /** fencing.ready.require-holding: GET /ready wants the JVM-wide lock held. */
  public boolean readyRequiresHolding() {
    Boolean b = get(ConfigKey.READY_REQUIRE_HOLDING);
    return b != null && b;
  }

  /** False when this JVM only propagates inbound tokens (fencing.lease.enabled=false). */
  public boolean leaseEnabled() {
    Boolean b = get(ConfigKey.LEASE_ENABLED);
    return b == null || b;
  }

  /**
   * The JVM-wide lock's name; "(unset)" when missing (then {@link #problems()} says so), "none" without a lease or
   * with declared sections only (the {@code lock} label of side effects outside every scope).
   */
  @Override
  public String lock() {
    String lock = get(ConfigKey.LOCK);
    return lock != null ? lock : leaseEnabled() && sections().isEmpty() && !sectionsAnnotated() && !shedLockEnabled() && quartzJobs().isEmpty()
        ? "(unset)" : "none";
  }

  /** True when fencing.lock is set (with a lease): side effects outside sections are fenced by it. */
  public boolean jvmWideLock() {
    return leaseEnabled() && get(ConfigKey.LOCK) != null;
  }

  /** fencing.sections, in configuration order; empty when none. */
  @Override
  public List<SectionSpec> sections() {
    List<SectionSpec> s = get(ConfigKey.SECTIONS);
    return s == null ? List.of() : s;
  }

  /**
   * Every lock this JVM campaigns for: the JVM-wide lock first (when set), then each section lock once, in order of
   * declaration. Empty without a lease.
   */
  public List<String> locks() {
    java.util.LinkedHashSet<String> locks = new java.util.LinkedHashSet<>();
    if (!leaseEnabled()) {
      return List.of();
    }
    if (get(ConfigKey.LOCK) != null) {
      locks.add(get(ConfigKey.LOCK));
    }
    for (SectionSpec s : sections()) {
      locks.add(s.lock());
    }
    return List.copyOf(locks);
  }

  public List<URI> etcdEndpoints() {
    return get(ConfigKey.ETCD_ENDPOINTS);
  }

  public String etcdUser() {
    return get(ConfigKey.ETCD_USER);
  }

  public Path etcdPasswordFile() {
    return get(ConfigKey.ETCD_PASSWORD_FILE);
  }

  public Path etcdTlsCa() {
    return get(ConfigKey.ETCD_TLS_CA);
  }

  public Path etcdTlsCert() {
    return get(ConfigKey.ETCD_TLS_CERT);
  }

  public Path etcdTlsKey() {
    return get(ConfigKey.ETCD_TLS_KEY);
  }

  public String etcdKeyPrefix() {
    return get(ConfigKey.ETCD_KEY_PREFIX);
  }

  public Duration etcdTimeout() {
    return get(ConfigKey.ETCD_TIMEOUT);
  }

  public Coordinator coordinator() {
    Coordinator c = get(ConfigKey.COORDINATOR);
    return c == null ? Coordinator.ETCD : c;
  }

  public String zookeeperConnect() {
    return get(ConfigKey.ZOOKEEPER_CONNECT);
  }

  public String zookeeperPath() {
    return get(ConfigKey.ZOOKEEPER_PATH);
  }

  public Duration zookeeperSessionTimeout() {
    return get(ConfigKey.ZOOKEEPER_SESSION_TIMEOUT);
  }

  public Path zookeeperAuthFile() {
    return get(ConfigKey.ZOOKEEPER_AUTH_FILE);
  }

  public Path zookeeperTruststore() {
    return get(ConfigKey.ZOOKEEPER_TLS_TRUSTSTORE);
  }

  public Path zookeeperTruststorePasswordFile() {
    return get(ConfigKey.ZOOKEEPER_TLS_TRUSTSTORE_PASSWORD_FILE);
  }

  public Path zookeeperKeystore() {
    return get(ConfigKey.ZOOKEEPER_TLS_KEYSTORE);
  }

  public Path zookeeperKeystorePasswordFile() {
    return get(ConfigKey.ZOOKEEPER_TLS_KEYSTORE_PASSWORD_FILE);
  }

  public Duration leaseTtl() {
    return get(ConfigKey.LEASE_TTL);
  }

  public Duration leaseSafetyMargin() {
    return get(ConfigKey.LEASE_SAFETY_MARGIN);
  }

  /** fencing.inventory.max-destinations: the most destinations the readiness report's inventory keeps. */
  public int inventoryMaxDestinations() {
    return (Integer) get(ConfigKey.INVENTORY_MAX_DESTINATIONS);
  }

  /** fencing.capture.max-locks: the bound on captured application locks (and so on their lock labels). */
  public int captureMaxLocks() {
    return (Integer) get(ConfigKey.CAPTURE_MAX_LOCKS);
  }

  /** fencing.sections.annotated: the JVM's sections are its @Fenced methods, and it needs no fencing.lock. */
  public boolean sectionsAnnotated() {
    Boolean b = get(ConfigKey.SECTIONS_ANNOTATED);
    return b != null && b;
  }

  /** fencing.shedlock.enabled: ShedLock's tasks run as scopes of the agent's lock of their name. */
  @Override
  public boolean shedLockEnabled() {
    Boolean b = get(ConfigKey.SHEDLOCK_ENABLED);
    return b != null && b;
  }

  public Duration shedLockWait() {
    return get(ConfigKey.SHEDLOCK_WAIT);
  }

  /** fencing.quartz.jobs: the Quartz jobs that run as scopes of an agent lock, and which. */
  public QuartzJobRules quartzJobs() {
    QuartzJobRules rules = get(ConfigKey.QUARTZ_JOBS);
    return rules == null ? QuartzJobRules.NONE : rules;
  }

  @Override
  public boolean quartzJobsDeclared() {
    return !quartzJobs().isEmpty();
  }

  public Duration quartzWait() {
    return get(ConfigKey.QUARTZ_WAIT);
  }

  public Duration captureSafetyMargin() {
    return get(ConfigKey.CAPTURE_SAFETY_MARGIN);
  }

  public Standby standby() {
    return get(ConfigKey.STANDBY);
  }

  public Duration standbyTimeout() {
    return get(ConfigKey.STANDBY_TIMEOUT);
  }

  public ExpiredFenced expiredFenced() {
    return get(ConfigKey.EXPIRED_FENCED);
  }

  public Mode mode() {
    return get(ConfigKey.MODE);
  }

  public FailMode failMode() {
    return get(ConfigKey.FAIL_MODE);
  }

  public long tokenMax() {
    return (Long) get(ConfigKey.TOKEN_MAX);
  }

  /** The key tokens are signed with (fencing.signing.key-file); null when tokens go unsigned. */
  public dev.fencing.protocol.TokenSignature signingKey() {
    return get(ConfigKey.SIGNING_KEY_FILE);
  }

  public Path stateDir() {
    return get(ConfigKey.STATE_DIR);
  }

  /** JDBC URL prefixes of databases configured as fenced. */
  @Override
  public List<String> fencedJdbc() {
    return get(ConfigKey.FENCED_JDBC);
  }

  @Override
  public JdbcPooler jdbcPooler() {
    return get(ConfigKey.JDBC_POOLER);
  }

  /** Database functions declared as writing (fencing.jdbc.write-functions). */
  @Override
  public List<String> jdbcWriteFunctions() {
    return get(ConfigKey.JDBC_WRITE_FUNCTIONS);
  }

  /** fencing.jdbc.idle-in-transaction-timeout (default: the lease TTL); zero: leave the database's setting. */
  @Override
  public Duration jdbcIdleInTransactionTimeout() {
    return get(ConfigKey.JDBC_IDLE_IN_TRANSACTION_TIMEOUT);
  }

  /** HTTP destinations configured as fenced: host:port or host. */
  @Override
  public List<String> fencedHttp() {
    return get(ConfigKey.FENCED_HTTP);
  }

  /** Kafka topics configured as fenced: exact names and globs where * matches any run of characters. */
  @Override
  public List<String> fencedKafka() {
    return get(ConfigKey.FENCED_KAFKA);
  }

  /** JDBC URL prefixes of databases that are never a lock-protected side effect (fencing.exempt.jdbc). */
  @Override
  public List<String> exemptJdbc() {
    return get(ConfigKey.EXEMPT_JDBC);
  }

  /** HTTP destinations that are never a lock-protected side effect: host, host:port, *.suffix[:port]. */
  @Override
  public List<String> exemptHttp() {
    return get(ConfigKey.EXEMPT_HTTP);
  }

  /** Kafka topics (names and globs) that are never a lock-protected side effect. */
  @Override
  public List<String> exemptKafka() {
    return get(ConfigKey.EXEMPT_KAFKA);
  }

  /** Class-name prefixes whose writes pass where they would be blocked (fencing.exempt.callers). */
  public List<String> exemptCallers() {
    return get(ConfigKey.EXEMPT_CALLERS);
  }

  /** Class-name prefixes of code that only passes calls on, skipped when looking for the calling code. */
  public List<String> exemptPassThrough() {
    return get(ConfigKey.EXEMPT_PASS_THROUGH);
  }

  /** Whether the built-in caller exemptions (telemetry exporters, discovery clients) apply. */
  public boolean exemptBuiltin() {
    return (Boolean) get(ConfigKey.EXEMPT_BUILTIN);
  }

  /** HTTP methods that are side effects, upper case. */
  @Override
  public List<String> unsafeHttpMethods() {
    return get(ConfigKey.UNSAFE_HTTP_METHODS);
  }

  /** The configured holder id, or hostname/pid (computed on first use: not in premain, where ProcessHandle is costly). */
  public String holderId() {
    String id = get(ConfigKey.HOLDER_ID);
    if (id == null) {
      id = ConfigLoader.defaultHolderId();
      values.put(ConfigKey.HOLDER_ID, id);
    }
    return id;
  }

  /** The HTTP endpoint port, or -1 when the endpoint is off. */
  public int httpPort() {
    Integer port = get(ConfigKey.HTTP_PORT);
    return port == null ? -1 : port;
  }

  public String httpHost() {
    return get(ConfigKey.HTTP_HOST);
  }

  /** The OTLP endpoint set with fencing.otlp.endpoint, as given; null when unset (otel.* settings may apply). */
  public URI otlpEndpoint() {
    return get(ConfigKey.OTLP_ENDPOINT);
  }

  /** fencing.otlp.headers, decoded; empty when unset. */
  public Map<String, String> otlpHeaders() {
    return get(ConfigKey.OTLP_HEADERS);
  }

  public Duration otlpInterval() {
    return get(ConfigKey.OTLP_INTERVAL);
  }

  public Duration logEventInterval() {
    return get(ConfigKey.LOG_EVENT_INTERVAL);
  }

  /** True when {@code key} was set in one of the sources (not left at its default). */
  public boolean isSet(ConfigKey key) {
    return sources.containsKey(key.key());
  }

  public Duration shutdownTimeout() {
    return get(ConfigKey.SHUTDOWN_TIMEOUT);
  }

  public String logLevel() {
    return get(ConfigKey.LOG_LEVEL);
  }

  /** Whether instrumentation {@code name} is on (default true). */
  public boolean instrumentationEnabled(String name) {
    return instrumentations.getOrDefault(name, Boolean.TRUE);
  }

  /**
   * A fencing.outbox.* setting as given (trimmed), or its default; null when it has none. Read as text and checked by
   * the relay's starter, so that a bad outbox setting is a warning and never a failed agent.
   */
  public String outboxSetting(ConfigKey key) {
    if (!key.key().startsWith("outbox.")) {
      throw new IllegalArgumentException(key.property() + " is no outbox setting");
    }
    return get(key);
  }

  /** Where the effective value of {@code key} came from, e.g. "system property"; "default" when not set. */
  public String sourceOf(ConfigKey key) {
    return sources.getOrDefault(key.key(), "default");
  }

  /** The effective value of a key as text (passwords are never held here). */
  public String display(ConfigKey key) {
    Object v = values.get(key);
    if (v == null) {
      return key == ConfigKey.HTTP_PORT ? "off" : "(none)";
    }
    if (v instanceof Duration) {
      return Durations.format((Duration) v);
    }
    if (v instanceof Map) {
      // Header values may be credentials: names only.
      StringBuilder sb = new StringBuilder();
      for (Object name : ((Map<?, ?>) v).keySet()) {
        sb.append(sb.length() == 0 ? "" : ",").append(name).append("=***");
      }
      return sb.length() == 0 ? "(none)" : sb.toString();
    }
    if (v instanceof Enum) {
      return ((Enum<?>) v).name().toLowerCase(java.util.Locale.ROOT);
    }
    if (v instanceof List) {
      StringBuilder sb = new StringBuilder();
      for (Object o : (List<?>) v) {
        sb.append(sb.length() == 0 ? "" : ",").append(o);
      }
      return sb.toString();
    }
    return v.toString();
  }
}
