package dev.fencing.fence.kafka;

import dev.fencing.fence.store.FencePolicy;
import dev.fencing.protocol.TokenSignature;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.kafka.common.config.ConfigException;

/**
 * The interceptor's own settings, read from the consumer's configuration map (prefix {@value #PREFIX}): Kafka hands
 * every property of the consumer to {@code configure}, so the fence needs no other configuration channel. {@link #KEYS}
 * is the reference (README.md's table is generated from it and checked by a test); an invalid value fails the
 * consumer's construction with a {@link ConfigException} naming the key, the value and the expected form.
 */
public final class KafkaFenceSettings {

  public static final String PREFIX = "fencing.fence.";
  public static final String LOCKS = PREFIX + "locks";
  public static final String TOPICS = PREFIX + "topics";
  public static final String STRICT = PREFIX + "strict";
  public static final String MISSING = PREFIX + "missing";
  public static final String STORE = PREFIX + "store";
  public static final String JDBC_URL = PREFIX + "jdbc.url";
  public static final String JDBC_USER = PREFIX + "jdbc.user";
  public static final String JDBC_PASSWORD = PREFIX + "jdbc.password";
  public static final String JDBC_SCHEMA = PREFIX + "jdbc.schema";
  public static final String JDBC_DRIVER = PREFIX + "jdbc.driver";
  public static final String JDBC_DATASOURCE = PREFIX + "jdbc.datasource";
  public static final String DLQ_TOPIC = PREFIX + "dead-letter.topic";
  public static final String DLQ_TIMEOUT = PREFIX + "dead-letter.timeout.ms";
  public static final String DLQ_KEY_SERIALIZER = PREFIX + "dead-letter.key.serializer";
  public static final String DLQ_VALUE_SERIALIZER = PREFIX + "dead-letter.value.serializer";
  public static final String DLQ_PRODUCER_PREFIX = PREFIX + "dead-letter.producer.";
  public static final String MICROMETER = PREFIX + "metrics.micrometer";
  public static final String SIGNING_KEY_FILE = PREFIX + "signing.key-file";
  public static final String OUTBOX = PREFIX + "outbox";
  public static final String OUTBOX_TOPICS = PREFIX + "outbox.topics";

  /** One documented setting: key, default (as shown to users) and one line of meaning. */
  public record Key(String name, String defaultValue, String meaning) {
  }

  /** Every setting, in README order. */
  public static final List<Key> KEYS = List.of(
      new Key(LOCKS, "(required)", "comma-separated lock names whose tokens this consumer accepts "
          + "(`[A-Za-z0-9._-]{1,128}`, as `fencing.lock`); each lock has its own fence"),
      new Key(TOPICS, "(all)", "comma-separated topics whose records are fenced; records of other topics pass "
          + "unchecked"),
      new Key(STRICT, "false", "accept only token > highest seen (per-record tokens), instead of token >= highest seen"),
      new Key(MISSING, "quarantine", "a record without a token (no `fencing` header): `quarantine` (drop or dead-letter, counted "
          + "as `missing_token`) or `pass` (rollout: unfenced producers still get through)"),
      new Key(SIGNING_KEY_FILE, "(none)", "file holding the key the producers' agents sign tokens with (their "
          + "`fencing.signing.key-file`): a record whose token has no valid `fencing-signature` is quarantined "
          + "(`missing_signature`, `bad_signature`) before the store is asked; without it tokens are not verified"),
      new Key(OUTBOX, "off", "records carrying `fencing-event-id` (the outbox relay's): `off` judges them by their "
          + "partition's fence like every record; `dedupe` accepts one with valid headers whatever its partition's "
          + "fence (its event passed the SQL fence at its commit; a higher token still raises the fence) and hands "
          + "each event id over once: later copies are skipped (see \"Outbox deliveries\")"),
      new Key(OUTBOX_TOPICS, "(all fenced)", "comma-separated topics where `" + OUTBOX + "=dedupe` applies; records "
          + "carrying `fencing-event-id` on other topics are judged by their partition's fence"),
      new Key(STORE, "jdbc", "where the fence of each partition lives: `jdbc` (durable, shared by all consumers: table "
          + "`fencing_kafka_fence`, created on first use) or `memory` (this JVM only, lost on restart)"),
      new Key(JDBC_URL, "(none)", "JDBC URL of the database holding `fencing_kafka_fence`; required for `store=jdbc` "
          + "unless `" + JDBC_DATASOURCE + "` is given"),
      new Key(JDBC_USER, "(none)", "database user, if not in the URL"),
      new Key(JDBC_PASSWORD, "(none)", "database password, if not in the URL"),
      new Key(JDBC_SCHEMA, "(connection default)", "schema (MariaDB/MySQL: database) of `fencing_kafka_fence`"),
      new Key(JDBC_DRIVER, "(none)", "JDBC driver class to load first, for class loaders DriverManager cannot see"),
      new Key(JDBC_DATASOURCE, "(none)", "a `javax.sql.DataSource` object (put in the consumer's config map in code) "
          + "used instead of the URL, e.g. the application's pool"),
      new Key(DLQ_TOPIC, "(none: dropped)", "topic that quarantined records are sent to, with `fencing-rejected*` "
          + "headers; without it they are dropped (and counted)"),
      new Key(DLQ_TIMEOUT, "5000", "how long a poll waits at most for the dead-letter topic to acknowledge a batch's "
          + "quarantined records (also the producer's `max.block.ms`)"),
      new Key(DLQ_KEY_SERIALIZER, "(derived)", "serializer for dead-lettered keys; derived from the consumer's "
          + "`key.deserializer` when it is one of Kafka's own (String, ByteArray, Long, ...)"),
      new Key(DLQ_VALUE_SERIALIZER, "(derived)", "the same for values and `value.deserializer`"),
      new Key(DLQ_PRODUCER_PREFIX + "*", "(none)", "any producer setting for the dead-letter producer; it already "
          + "gets the consumer's `bootstrap.servers`, `client.dns.lookup`, `security.protocol`, `ssl.*` and `sasl.*`"),
      new Key(MICROMETER, "true", "bind the fence's counters (`KafkaFenceMeterBinder`: `fencing.fence.rejections`, "
          + "...) to Micrometer's `Metrics.globalRegistry` when Micrometer is on the class path; `false` when the "
          + "application binds `KafkaFenceMeterBinder` itself (the Spring Boot starter does)"));

  /** What happens to a record without a fencing token. */
  public enum Missing { QUARANTINE, PASS }

  /** The rule for records carrying {@code fencing-event-id}. */
  public enum Outbox { OFF, DEDUPE }

  /** Where the highest token per lock is kept. */
  public enum Store { JDBC, MEMORY }

  private final FencePolicy policy;
  private final Set<String> topics;
  private final Outbox outbox;
  private final Set<String> outboxTopics;
  private final Store store;
  private final String jdbcUrl;
  private final String jdbcUser;
  private final String jdbcPassword;
  private final String jdbcSchema;
  private final String jdbcDriver;
  private final DataSource dataSource;
  private final String deadLetterTopic;
  private final long deadLetterTimeoutMillis;
  private final String keySerializer;
  private final String valueSerializer;
  private final Map<String, Object> deadLetterProducer;
  private final boolean micrometer;

  private KafkaFenceSettings(Map<String, ?> config) {
    String locks = string(config, LOCKS);
    if (locks == null || locks.isBlank()) {
      throw new ConfigException(LOCKS, locks, "name the lock(s) whose tokens this consumer accepts, e.g. "
          + LOCKS + "=ledger");
    }
    Missing missing = choice(config, MISSING, Missing.class, Missing.QUARANTINE);
    try {
      this.policy = FencePolicy.forLocks(list(locks).toArray(String[]::new))
          .strict(bool(config, STRICT, false))
          .permissive(missing == Missing.PASS)
          .signingKey(signingKey(config))
          .build();
    } catch (IllegalArgumentException e) {
      throw new ConfigException(LOCKS, locks, e.getMessage());
    }
    String topicList = string(config, TOPICS);
    this.topics = topicList == null || topicList.isBlank() ? null
        : Collections.unmodifiableSet(new LinkedHashSet<>(list(topicList)));
    this.outbox = choice(config, OUTBOX, Outbox.class, Outbox.OFF);
    String outboxTopicList = string(config, OUTBOX_TOPICS);
    this.outboxTopics = outboxTopicList == null || outboxTopicList.isBlank() ? null
        : Collections.unmodifiableSet(new LinkedHashSet<>(list(outboxTopicList)));
    this.store = choice(config, STORE, Store.class, Store.JDBC);
    this.jdbcUrl = string(config, JDBC_URL);
    this.jdbcUser = string(config, JDBC_USER);
    this.jdbcPassword = string(config, JDBC_PASSWORD);
    this.jdbcSchema = string(config, JDBC_SCHEMA);
    this.jdbcDriver = string(config, JDBC_DRIVER);
    Object ds = config.get(JDBC_DATASOURCE);
    if (ds != null && !(ds instanceof DataSource)) {
      throw new ConfigException(JDBC_DATASOURCE, ds.getClass().getName(), "expected a javax.sql.DataSource object");
    }
    this.dataSource = (DataSource) ds;
    if (store == Store.JDBC && dataSource == null && (jdbcUrl == null || jdbcUrl.isBlank())) {
      throw new ConfigException(JDBC_URL, jdbcUrl, "the jdbc store (" + STORE + "=jdbc, the default) needs the "
          + "database holding fencing_fence: set " + JDBC_URL + " (or " + JDBC_DATASOURCE + "), or choose "
          + STORE + "=memory, which forgets the fence on restart");
    }
    String dlq = string(config, DLQ_TOPIC);
    this.deadLetterTopic = dlq == null || dlq.isBlank() ? null : dlq.trim();
    this.deadLetterTimeoutMillis = positiveLong(config, DLQ_TIMEOUT, 5000);
    this.keySerializer = className(config.get(DLQ_KEY_SERIALIZER));
    this.valueSerializer = className(config.get(DLQ_VALUE_SERIALIZER));
    Map<String, Object> producer = new LinkedHashMap<>();
    config.forEach((k, v) -> {
      if (k.startsWith(DLQ_PRODUCER_PREFIX) && v != null) {
        producer.put(k.substring(DLQ_PRODUCER_PREFIX.length()), v);
      }
    });
    this.deadLetterProducer = Collections.unmodifiableMap(producer);
    this.micrometer = bool(config, MICROMETER, true);
  }

  /** Reads and validates the settings from a consumer's configuration map. */
  public static KafkaFenceSettings from(Map<String, ?> config) {
    return new KafkaFenceSettings(config);
  }

  /** Locks, strict mode, and permissive (= {@code missing=pass}); the HTTP fence's policy type, paths unused. */
  public FencePolicy policy() {
    return policy;
  }

  public Set<String> locks() {
    return policy.locks();
  }

  public boolean strict() {
    return policy.strict();
  }

  public Missing missing() {
    return policy.permissive() ? Missing.PASS : Missing.QUARANTINE;
  }

  /**
   * Whether records of {@code topic} are fenced. Never the dead-letter topic's: they still carry the stale headers,
   * and a consumer reading it (e.g. by pattern) would otherwise send them around again.
   */
  public boolean fences(String topic) {
    return (topics == null || topics.contains(topic)) && !topic.equals(deadLetterTopic);
  }

  public Outbox outbox() {
    return outbox;
  }

  /** Whether records of {@code topic} that carry {@code fencing-event-id} are judged by the outbox rule. */
  public boolean dedupesEvents(String topic) {
    return outbox == Outbox.DEDUPE && (outboxTopics == null || outboxTopics.contains(topic));
  }

  public Store store() {
    return store;
  }

  public String jdbcUrl() {
    return jdbcUrl;
  }

  public String jdbcUser() {
    return jdbcUser;
  }

  public String jdbcPassword() {
    return jdbcPassword;
  }

  public String jdbcSchema() {
    return jdbcSchema;
  }

  public String jdbcDriver() {
    return jdbcDriver;
  }

  public DataSource dataSource() {
    return dataSource;
  }

  /** Null when quarantined records are dropped. */
  public String deadLetterTopic() {
    return deadLetterTopic;
  }

  public long deadLetterTimeoutMillis() {
    return deadLetterTimeoutMillis;
  }

  public String keySerializer() {
    return keySerializer;
  }

  public String valueSerializer() {
    return valueSerializer;
  }

  /** The {@value #DLQ_PRODUCER_PREFIX}* settings without the prefix. */
  public Map<String, Object> deadLetterProducer() {
    return deadLetterProducer;
  }

  public boolean micrometer() {
    return micrometer;
  }

  /** The reference table of README.md. */
  public static String markdownTable() {
    StringBuilder b = new StringBuilder("| setting | default | meaning |\n|---|---|---|\n");
    for (Key k : KEYS) {
      b.append("| `").append(k.name()).append("` | ").append(k.defaultValue().startsWith("(") ? k.defaultValue()
          : "`" + k.defaultValue() + "`").append(" | ").append(k.meaning()).append(" |\n");
    }
    return b.toString();
  }

  private static String string(Map<String, ?> config, String key) {
    Object v = config.get(key);
    if (v == null) {
      return null;
    }
    if (v instanceof List<?> l) {
      return l.stream().map(String::valueOf).collect(Collectors.joining(","));
    }
    return v.toString();
  }

  private static List<String> list(String value) {
    return Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
  }

  private static boolean bool(Map<String, ?> config, String key, boolean dflt) {
    String v = string(config, key);
    if (v == null) {
      return dflt;
    }
    switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "true":
        return true;
      case "false":
        return false;
      default:
        throw new ConfigException(key, v, "expected true or false");
    }
  }

  private static long positiveLong(Map<String, ?> config, String key, long dflt) {
    String v = string(config, key);
    if (v == null) {
      return dflt;
    }
    try {
      long n = Long.parseLong(v.trim());
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new ConfigException(key, v, "expected a positive number of milliseconds");
  }

  private static <E extends Enum<E>> E choice(Map<String, ?> config, String key, Class<E> type, E dflt) {
    String v = string(config, key);
    if (v == null) {
      return dflt;
    }
    for (E e : type.getEnumConstants()) {
      if (e.name().equalsIgnoreCase(v.trim())) {
        return e;
      }
    }
    throw new ConfigException(key, v, "expected one of " + Arrays.stream(type.getEnumConstants())
        .map(e -> e.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", ")));
  }

  private static TokenSignature signingKey(Map<String, ?> config) {
    String file = string(config, SIGNING_KEY_FILE);
    if (file == null || file.isBlank()) {
      return null;
    }
    try {
      return TokenSignature.load(Path.of(file.trim()));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(SIGNING_KEY_FILE, file, e.getMessage());
    }
  }

  private static String className(Object v) {
    if (v == null) {
      return null;
    }
    return v instanceof Class<?> c ? c.getName() : v.toString().trim();
  }
}
