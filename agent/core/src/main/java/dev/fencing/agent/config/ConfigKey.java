package dev.fencing.agent.config;

import java.time.Duration;

/**
 * Every configuration key, defined once: its name (without the {@code fencing.} prefix), expected form, default, one
 * line of documentation and its {@link ValueType} (parser, check, typed default). This table is the single source of
 * the configuration reference, docs/reference/configuration.md ({@code java -jar fencing-agent.jar config} prints
 * it), and of what {@link ConfigLoader} reads.
 */
public enum ConfigKey {
  ENABLED("enabled", "true|false", "true", "false: the agent stays out of this JVM, as if it were not attached (premain returns at once: no hook, no thread, no port, no lock; one INFO line says so). Read before anything else of the agent loads, from every source including the properties file.",
      ValueType.flag()),
  JDK_TOOLS_ENABLED("jdk-tools.enabled", "true|false", "false", "true: the agent also starts in the JDK's own tools (jcmd, jps, jstack, keytool, jshell and the JVMs they launch, any main class of a `java.*` or `jdk.*` module) when `JAVA_TOOL_OPTIONS` hands it to them; by default it stays out of them (a DEBUG line says so). The agent jar's own command line (`java -jar fencing-agent.jar ...`) never starts it. See [JDK tools](../guides/attaching.md#jdk-tools-and-the-off-switch).",
      ValueType.flag()),
  LOCK("lock", "name", "(required unless fencing.sections)", "Name of the JVM-wide lock: every side effect of the JVM outside a section is fenced by it; every JVM with the same name contends for one lease (not needed with fencing.lease.enabled=false, optional with fencing.sections).",
      ValueType.lock()),
  SECTIONS("sections", "class#method@lock list", "(none)", "Declared sections, comma-separated `<fully.qualified.Class>#<method>@<lock>` (nested classes with `$`; every overload of the method): a section runs in the scope of its lock, which this JVM campaigns for (its own key and token). Holding the lock, the section's side effects carry its token; not holding, a `void` method is skipped and any other method runs with its side effects refused as on standby. Outside every section and without fencing.lock, side effects pass (tagged only with an inbound token).",
      ValueType.sections()),
  SECTIONS_ANNOTATED("sections.annotated", "true|false", "false", "true: this JVM's sections are (also) its methods annotated `@Fenced(\"<lock>\")` with the optional fencing-api, so fencing.lock is optional as with fencing.sections: without it, side effects outside every section pass (tagged only with an inbound token). An annotated method is a section whatever this says (see [Application API](api.md)); this only says that the JVM needs no JVM-wide lock.",
      ValueType.flag()),
  LEASE_ENABLED("lease.enabled", "true|false", "true", "false: this JVM campaigns for no lease (no lock, no etcd): its side effects carry the token an inbound request or record brought (cross-hop propagation) and pass untagged otherwise.",
      ValueType.flag()),
  COORDINATOR("coordinator", "etcd|zookeeper", "etcd", "Where the lock and its fencing token come from: etcd (fencing.etcd.*; token = the lock key's create revision) or ZooKeeper (fencing.zookeeper.*; token = the czxid of this holder's lock node).",
      ValueType.choice(AgentConfig.Coordinator.class)),
  ETCD_ENDPOINTS("etcd.endpoints", "URL list", "http://127.0.0.1:2379", "etcd client URLs, separated by commas or semicolons.",
      ValueType.endpoints()),
  ETCD_USER("etcd.user", "name", "(none)", "etcd user for authentication; needs fencing.etcd.password-file.",
      ValueType.text()),
  ETCD_PASSWORD_FILE("etcd.password-file", "path", "(none)", "File holding the etcd password (first line). Passwords are never taken inline.",
      ValueType.readableFile()),
  ETCD_TLS_CA("etcd.tls.ca", "path", "(none)", "PEM file of the CA that signed the etcd server certificates; enables TLS.",
      ValueType.readableFile()),
  ETCD_TLS_CERT("etcd.tls.cert", "path", "(none)", "PEM client certificate for mutual TLS (with fencing.etcd.tls.key).",
      ValueType.readableFile()),
  ETCD_TLS_KEY("etcd.tls.key", "path", "(none)", "PEM PKCS#8 private key of the client certificate.",
      ValueType.readableFile()),
  ETCD_KEY_PREFIX("etcd.key-prefix", "key", "/fencing/locks/", "etcd key prefix under which lock keys are created (prefix + lock name).",
      ValueType.text()),
  ETCD_TIMEOUT("etcd.timeout", "duration", "5s", "Timeout of one coordinator request, etcd or ZooKeeper (connect, grant, revoke, status).",
      ValueType.duration(Duration.ofMillis(100))),
  LEASE_TTL("lease.ttl", "duration", "10s", "Lease TTL in etcd: how long a stalled holder keeps the lock before a successor may take it (at least 2s).",
      ValueType.ttl()),
  LEASE_SAFETY_MARGIN("lease.safety-margin", "duration", "1s", "Subtracted from the local lease deadline to absorb clock-rate drift; below half the TTL.",
      ValueType.margin()),
  ZOOKEEPER_CONNECT("zookeeper.connect", "host:port list[/chroot]", "127.0.0.1:2181", "ZooKeeper connect string (fencing.coordinator=zookeeper): servers separated by commas, optionally followed by a chroot path (which must exist), e.g. zk1:2181,zk2:2181,zk3:2181/apps.",
      ValueType.text()),
  ZOOKEEPER_PATH("zookeeper.path", "path", "/fencing/locks", "ZooKeeper node under which lock nodes are created (<path>/<lock>/lock-<sequence>, ephemeral); its czxid identifies the ensemble for token-reuse detection.",
      ValueType.zkPath()),
  ZOOKEEPER_SESSION_TIMEOUT("zookeeper.session-timeout", "duration", "(fencing.lease.ttl)", "Requested ZooKeeper session timeout, the \"lease TTL\" of the ZooKeeper coordinator: the server may negotiate it into its minSessionTimeout..maxSessionTimeout; the local deadline is the last server response + the negotiated timeout - fencing.lease.safety-margin.",
      ValueType.sessionTimeout()),
  ZOOKEEPER_AUTH_FILE("zookeeper.auth-file", "path", "(none)", "File whose first line is user:password for ZooKeeper digest authentication; nodes the agent creates then get the ACL creator-all (only that user may read, write or delete them). Credentials are never taken inline.",
      ValueType.readableFile()),
  ZOOKEEPER_TLS_TRUSTSTORE("zookeeper.tls.truststore", "path", "(none)", "Trust store with the CA of the ZooKeeper servers' certificates: a PEM file (e.g. ca.crt, recognised by its -----BEGIN line), JKS (.jks) or PKCS12 (.p12, .pfx, any other name); enables TLS (the client's Netty socket, zookeeper.client.secure).",
      ValueType.readableFile()),
  ZOOKEEPER_TLS_TRUSTSTORE_PASSWORD_FILE("zookeeper.tls.truststore-password-file", "path", "(none)", "File holding the trust store password (first line); none: no password (a PEM file has none).",
      ValueType.readableFile()),
  ZOOKEEPER_TLS_KEYSTORE("zookeeper.tls.keystore", "path", "(none)", "Key store with the client certificate and key, for servers that require client authentication (with fencing.zookeeper.tls.truststore): PEM (the private key and the certificate chain in one file), JKS or PKCS12, recognised as for the trust store.",
      ValueType.readableFile()),
  ZOOKEEPER_TLS_KEYSTORE_PASSWORD_FILE("zookeeper.tls.keystore-password-file", "path", "(none)", "File holding the key store password (first line); none: no password (an unencrypted PEM key).",
      ValueType.readableFile()),
  STANDBY("standby", "block|wait", "block", "A side effect while not holding the lease: block fails it at once; wait waits for the lease up to fencing.standby.timeout, then fails it (never on a thread marked non-blocking: Reactor Netty's event loops decide at once).",
      ValueType.choice(AgentConfig.Standby.class)),
  STANDBY_TIMEOUT("standby.timeout", "duration", "5s", "Longest wait for the lease when fencing.standby=wait.",
      ValueType.duration(Duration.ZERO)),
  EXPIRED_FENCED("expired.fenced", "tag|block", "tag", "After the lease expired or was lost, side effects toward fenced destinations are sent with the last token (the fence rejects them) or blocked.",
      ValueType.choice(AgentConfig.ExpiredFenced.class)),
  MODE("mode", "enforce|observe", "enforce", "observe never blocks: it tags what it can and counts what enforce would have blocked.",
      ValueType.choice(AgentConfig.Mode.class)),
  FAIL_MODE("fail-mode", "closed|open", "closed", "When the agent is misconfigured or cannot reach etcd before its first lease: closed blocks side effects, open lets them pass untagged.",
      ValueType.choice(AgentConfig.FailMode.class)),
  TOKEN_MAX("token.max", "integer", "9223372036854775807", "Largest token the protected resources can store (2147483647 for INT columns, 9007199254740991 for JSON); a larger token is an overflow and blocks.",
      ValueType.tokenMax()),
  STATE_DIR("state.dir", "path", "(none)", "Directory where the highest token seen per lock is kept across restarts, so token reuse is detected after a restart too.",
      ValueType.path()),
  FENCED_JDBC("fenced.jdbc", "JDBC URL prefixes", "(none)", "Databases whose every write a fence judges (every table written is fenced), comma-separated JDBC URL prefixes. Other databases are fenced table by table, as their fence triggers show: after expiry only writes to a fenced table are sent (with the last token), everything else is blocked.",
      ValueType.list()),
  JDBC_POOLER("jdbc.pooler", "auto|transaction|session", "auto", "How a PostgreSQL session is made to carry the token. session: set once per connection (direct connections, session-mode poolers). transaction: set in each transaction that writes (set_config(..., true)), autocommit writes run in a transaction of their own (PgBouncer pool_mode=transaction or statement, RDS Proxy, Supavisor). auto: session only where the connection is proven direct (the server process running its statements is the one the driver was told of at connect), else transaction.",
      ValueType.choice(dev.fencing.agent.instrumentation.api.JdbcPooler.class)),
  JDBC_WRITE_FUNCTIONS("jdbc.write-functions", "name list", "(none)", "Database functions or procedures that write (e.g. reserve_stock), comma-separated: a statement naming one is a write even when it reads like a SELECT; no fence can tell which tables it touches, so after expiry it is blocked unless the database is listed in fencing.fenced.jdbc.",
      ValueType.list()),
  JDBC_IDLE_IN_TRANSACTION_TIMEOUT("jdbc.idle-in-transaction-timeout", "duration", "(fencing.lease.ttl)", "On a fenced database, how long this JVM's session may stay idle inside a transaction before the database ends it (PostgreSQL idle_in_transaction_session_timeout, MariaDB idle_write_transaction_timeout): bounds how long a frozen holder's open transaction holds its successor back. 0s leaves the database's setting.",
      ValueType.durationDefaultingToTtl()),
  FENCED_HTTP("fenced.http", "host:port list", "(none)", "HTTP destinations that check tokens (host:port, or host for any port), comma-separated: after expiry they still get the last token, unfenced ones get nothing.",
      ValueType.list()),
  UNSAFE_HTTP_METHODS("unsafe-http-methods", "method list", "POST,PUT,PATCH,DELETE", "HTTP methods that are side effects (blocked when the policy blocks); other methods pass, tagged while the lease is valid.",
      ValueType.methods()),
  FENCED_KAFKA("fenced.kafka", "topic list", "(none)", "Kafka topics whose consumers check tokens, comma-separated names or globs (* matches any run of characters, e.g. ledger-*): after expiry their records still carry the last token, records to other topics are blocked.",
      ValueType.topics()),
  EXEMPT_JDBC("exempt.jdbc", "JDBC URL prefixes", "(none)", "Databases that are never a lock-protected side effect (comma-separated JDBC URL prefixes, e.g. a metrics or cache database): their statements and commits pass untagged and are never blocked, counted as outcome=\"exempt\". Decided once per connection. See Exemptions.",
      ValueType.list()),
  EXEMPT_HTTP("exempt.http", "host:port list", "(none)", "HTTP destinations that are never a lock-protected side effect: host:port, host (any port), *.suffix (any host ending with .suffix), comma-separated. Their requests pass untagged and are never blocked, counted as outcome=\"exempt\". See Exemptions.",
      ValueType.exemptHosts()),
  EXEMPT_KAFKA("exempt.kafka", "topic list", "(none)", "Kafka topics that are never a lock-protected side effect, comma-separated names or globs (* matches any run of characters): their records pass untagged and are never blocked, counted as outcome=\"exempt\". See Exemptions.",
      ValueType.topics()),
  EXEMPT_CALLERS("exempt.callers", "package prefix list", "org.flywaydb.,liquibase.,org.springframework.session.", "Code whose writes pass (untagged, counted as outcome=\"exempt\") where they would be blocked: a write is exempt when the calling code, the frame nearest to the write on the calling thread's stack once drivers, pools, ORMs, client libraries and the JDK are skipped (see fencing.exempt.pass-through), has one of these prefixes; a frame further down (a filter, a scheduler) never exempts it. Checked only when a side effect would be blocked, never while tagging. none: no caller is exempt. See Exemptions.",
      ValueType.callerPrefixes()),
  EXEMPT_BUILTIN("exempt.builtin", "true|false", "true", "Built-in caller exemptions: telemetry exporters (OpenTelemetry SDK, Zipkin reporter, Jaeger client, Micrometer push registries) and service-discovery clients (Eureka, Consul) pass where they would be blocked, as fencing.exempt.callers does. false: only fencing.exempt.callers. See Exemptions.",
      ValueType.flag()),
  EXEMPT_PASS_THROUGH("exempt.pass-through", "package prefix list", "(none)", "Code that only passes a call on (a DataSource decorator, an HTTP client wrapper), skipped like the built-in list (the JDK, JDBC drivers, pools, Spring's data access and HTTP clients, Hibernate, jOOQ, MyBatis, HTTP and Kafka clients) when fencing.exempt.callers looks for the calling code. Never list application code or an exempt caller's entry point here. See Exemptions.",
      ValueType.callerPrefixes()),
  SIGNING_KEY_FILE("signing.key-file", "path", "(none)", "File whose first line is a base64 key of at least 32 bytes (openssl rand -base64 32): every token is sent with its HMAC-SHA256 signature (Fencing-Signature, fencing-signature, the session's fencing.signature), and fences holding the same key refuse unsigned or forged tokens. Unreadable or too short: invalid configuration (fail-mode decides).",
      ValueType.signingKey()),
  HOLDER_ID("holder.id", "text", "hostname/pid", "Identity of this process, stored in the lock key and shown by status and doctor.",
      ValueType.textComputedLater()),
  HTTP_PORT("http.port", "port", "(off)", "Port of the agent's HTTP endpoint (GET /status, GET /metrics, GET /ready, GET /live); 0 picks a free port.",
      ValueType.port()),
  HTTP_HOST("http.host", "address", "127.0.0.1", "Address the HTTP endpoint binds to.",
      ValueType.text()),
  READY_REQUIRE_HOLDING("ready.require-holding", "true|false", "false", "true: `GET /ready` also answers 503 while this JVM does not hold its JVM-wide lock (starting, standby, expired or lost), so only the holder is ready; false: only a `FAILED` agent is not ready. See [Probes](../reference/probes.md).",
      ValueType.flag()),
  OTLP_ENDPOINT("otlp.endpoint", "URL", "(off)", "OTLP/HTTP (protobuf) receiver the metrics are pushed to, e.g. http://collector:4318 (/v1/metrics is appended unless the path ends with it); when unset, otel.exporter.otlp[.metrics].endpoint or OTEL_EXPORTER_OTLP[_METRICS]_ENDPOINT; off when none is set.",
      ValueType.httpUrl()),
  OTLP_HEADERS("otlp.headers", "name=value list", "(none)", "Headers of every OTLP export request (e.g. Authorization=Bearer%20abc), comma-separated, values URL-encoded; when unset and the endpoint comes from otel.*, otel.exporter.otlp[.metrics].headers or OTEL_EXPORTER_OTLP[_METRICS]_HEADERS.",
      ValueType.nameValues()),
  OTLP_INTERVAL("otlp.interval", "duration", "60s", "Time between OTLP exports; when unset, otel.metric.export.interval (milliseconds) or OTEL_METRIC_EXPORT_INTERVAL.",
      ValueType.duration(Duration.ofMillis(100))),
  INVENTORY_MAX_DESTINATIONS("inventory.max-destinations", "integer", "500", "Most destinations (JDBC tables, HTTP services, Kafka topics) the readiness report's inventory keeps, from 1 to 100000 (about 1 KB of heap each, for the JVM's life); side effects toward a further destination are counted in the report's overflow only. A value that is not such an integer is a warning (naming what is expected), and the default is kept. See Reference: readiness report.",
      ValueType.count(1, 100_000)),
  SHUTDOWN_TIMEOUT("shutdown.timeout", "duration", "2s", "Longest time the JVM shutdown waits for the lease to be revoked in etcd and the last OTLP export.",
      ValueType.duration(Duration.ZERO)),
  LOG_LEVEL("log.level", "error|warn|info|debug|trace", "info", "Agent log level; the agent logs one-line messages to standard error (trace adds the bundled libraries' own debug output).",
      ValueType.word("error", "warn", "info", "debug", "trace")),
  LOG_EVENT_INTERVAL("log.event-interval", "duration", "10s", "At most one log line per kind of blocked or rejected side effect (channel and reason) in this period; the next such line counts those left out. 0 logs each one.",
      ValueType.duration(Duration.ZERO)),
  CONFIG_FILE("config.file", "path", "(none)", "A properties file with more fencing.* keys (lowest precedence).",
      ValueType.path()),
  CAPTURE_MAX_LOCKS("capture.max-locks", "integer", "16", "Most distinct application-owned locks (Curator lock paths, jetcd lock names) this JVM captures, each with its own lock label and token state; an acquisition of a further lock is not captured (logged once per lock).",
      ValueType.count(1, 1000)),
  CAPTURE_SAFETY_MARGIN("capture.safety-margin", "duration", "1s", "Subtracted from a captured lock's local deadline (the send time of the last answered ZooKeeper `sync` or etcd keepalive plus its session timeout or lease TTL).",
      ValueType.duration(Duration.ZERO)),
  SHEDLOCK_ENABLED("shedlock.enabled", "true|false", "false", "Runs every ShedLock task (`@SchedulerLock(name = X)`, `LockingTaskExecutor`) as a scope of the agent's lock X: once ShedLock holds its lock, the agent campaigns for X (etcd or ZooKeeper, its own lease), the task runs in X's scope with X's token, and X is given back when the task ends. See Guides: ShedLock.",
      ValueType.flag()),
  SHEDLOCK_WAIT("shedlock.wait", "duration", "30s", "How long a ShedLock task waits for the agent's lock of its name (a paused or crashed previous holder's lease lapses within fencing.lease.ttl); when it is not held by then, the task fails with ShedLockNotFencedException and does not run.",
      ValueType.duration(Duration.ofMillis(1))),
  QUARTZ_JOBS("quartz.jobs", "pattern[@lock] list", "(none)", "Quartz jobs that run as scopes of an agent lock, comma-separated `<pattern>[@<lock>]`: a pattern matches a job's key (`group.name`) or its job class's fully qualified name, `*` for any run of characters; the first entry that matches decides, and without `@<lock>` the lock is named after the job key. When such a job starts on a node (its trigger fired there, or the node recovered it from a node the cluster took for dead), the agent campaigns for the lock (etcd or ZooKeeper, its own lease), the job runs in its scope with its token, and the lock is given back when the job returns. See [Quartz jobs](../guides/attaching.md#quartz-jobs).",
      ValueType.quartzJobs()),
  QUARTZ_WAIT("quartz.wait", "duration", "30s", "How long a declared Quartz job waits for its agent lock (a paused or crashed previous holder's lease lapses within fencing.lease.ttl); when it is not held by then, the job fails with a JobExecutionException (its cause a QuartzJobNotFencedException) and its body does not run.",
      ValueType.duration(Duration.ofMillis(1))),
  OUTBOX_ENABLED("outbox.enabled", "true|false", "false", "true: this JVM relays the committed events of its outbox tables (fencing.outbox.table) to their HTTP endpoints and Kafka topics, on the agent's daemon threads, started after premain; every replica may relay, holder or not. Deliveries carry each row's own token, lock and grant and are never judged by this JVM's lease. The JDBC driver (and kafka-clients) are the application's own. An invalid outbox setting is a warning and no relay, never a failed agent. See [Outbox relay](outbox-relay.md#inside-an-application-with-the-agent).",
      ValueType.text()),
  OUTBOX_TABLE("outbox.table", "table list", "outbox", "The outbox tables this JVM relays, comma-separated `[schema.]name` (one relay each).",
      ValueType.text()),
  OUTBOX_JDBC_URL("outbox.jdbc-url", "JDBC URL", "(none)", "The outbox tables' database (required with fencing.outbox.enabled=true); a driver of the application's class path must accept it.",
      ValueType.text()),
  OUTBOX_USER("outbox.user", "name", "(none)", "The relay's database user; it needs `SELECT` on the outbox and `UPDATE` of its delivery columns only.",
      ValueType.text()),
  OUTBOX_PASSWORD_FILE("outbox.password-file", "path", "(none)", "File holding the relay's database password (first line); needs fencing.outbox.user. Passwords are never taken inline.",
      ValueType.text()),
  OUTBOX_KAFKA_BOOTSTRAP("outbox.kafka-bootstrap", "host:port list", "(none)", "Kafka's `bootstrap.servers` for Kafka events (kafka-clients from the application's class path); without it Kafka events fail and are parked in the end.",
      ValueType.text()),
  OUTBOX_POLL_INTERVAL("outbox.poll-interval", "duration", "(1s; 30s on PostgreSQL, which LISTENs)", "How often the relay looks for due events without a wake-up.",
      ValueType.text()),
  OUTBOX_MAX_ATTEMPTS("outbox.max-attempts", "integer", "10", "Failed attempts after which an event is parked.",
      ValueType.text()),
  INSTRUMENTATION_ENABLED("instrumentation.<name>.enabled", "true|false", "true", "Switches one instrumentation (jdbc, java-http-client, http-url-connection, apache-httpclient-5, apache-httpclient-4, okhttp, reactor-netty, kafka-clients; inbound tokens: servlet, jdk-http-server, executors; application-owned locks: curator, jetcd-lock, redisson; application API: fencing-api; schedulers: quartz; logs: log-correlation; class-loaders: makes every class loader delegate the agent's bootstrap package, see Safety) on or off.",
      ValueType.flag());

  public static final String PREFIX = "fencing.";

  private final String key;
  private final String form;
  private final String defaultText;
  private final String doc;
  private final ValueType<?> type;

  ConfigKey(String key, String form, String defaultText, String doc, ValueType<?> type) {
    this.key = key;
    this.form = form;
    this.defaultText = defaultText;
    this.doc = doc;
    this.type = type;
  }

  /** How a value of this key is read, checked and defaulted. */
  ValueType<?> type() {
    return type;
  }

  /** The key without the {@code fencing.} prefix, as used in agent arguments. */
  public String key() {
    return key;
  }

  /** The full system-property name, e.g. {@code fencing.lease.ttl}. */
  public String property() {
    return PREFIX + key;
  }

  /** The environment variable, e.g. {@code FENCING_LEASE_TTL}. */
  public String envVar() {
    return envVarOf(key);
  }

  public String form() {
    return form;
  }

  public String defaultText() {
    return defaultText;
  }

  public String doc() {
    return doc;
  }

  static String envVarOf(String key) {
    return "FENCING_" + key.toUpperCase(java.util.Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  /** The reference table in Markdown, as in docs/reference/configuration.md. */
  public static String markdownTable() {
    StringBuilder sb = new StringBuilder();
    sb.append("| key | environment | form | default | meaning |\n|---|---|---|---|---|\n");
    for (ConfigKey k : values()) {
      sb.append("| `").append(k.property()).append("` | `").append(k.envVar()).append("` | ").append(k.form.replace("|", "\\|"))
          .append(" | ").append(k.defaultText).append(" | ").append(k.doc).append(" |\n");
    }
    return sb.toString();
  }
}
