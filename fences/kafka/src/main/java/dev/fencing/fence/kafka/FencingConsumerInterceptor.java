package dev.fencing.fence.kafka;

import dev.fencing.protocol.Rejection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka consumer fence, enabled by configuration alone:
 * <pre>
 * interceptor.classes=dev.fencing.fence.kafka.FencingConsumerInterceptor
 * fencing.fence.locks=ledger
 * fencing.fence.jdbc.url=jdbc:postgresql://db/app?user=fence
 * </pre>
 * Each poll's records pass through {@link RecordFence}: records of stale lock holders (a token below the fence of
 * their partition at their offset), and records with a missing or malformed token, are quarantined: sent to the dead-letter topic when
 * one is configured, else dropped; always counted. The rest reach the application unchanged. Settings: {@link
 * KafkaFenceSettings}; README.md explains the choices.
 */
public final class FencingConsumerInterceptor<K, V> implements ConsumerInterceptor<K, V> {

  private static final Logger LOG = LoggerFactory.getLogger(FencingConsumerInterceptor.class);
  /** The memory store is per JVM, so that a consumer restarted in the same JVM keeps the fence. */
  private static final InMemoryPartitionFenceStore MEMORY = new InMemoryPartitionFenceStore();
  private static final long WARN_INTERVAL_NANOS = 10_000_000_000L;

  private RecordFence fence;
  private DeadLetters deadLetters;
  private SingleConnectionDataSource connection;
  private long lastWarn = System.nanoTime() - WARN_INTERVAL_NANOS;

  @Override
  public void configure(Map<String, ?> configs) {
    KafkaFenceSettings settings = KafkaFenceSettings.from(configs);
    KafkaFenceMetrics metrics = KafkaFenceMetrics.global();
    PartitionFenceStore store = store(settings);
    try {
      this.fence = new RecordFence(settings, store, metrics);
      if (settings.micrometer() && micrometerAvailable()) {
        MicrometerBinding.bindGlobal(metrics);
      }
      this.deadLetters = DeadLetters.create(settings, configs, metrics);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
    LOG.info("fencing: consumer fence on for lock(s) {} ({} store{}{}; records without a token are {}; quarantined "
        + "records are {})", settings.locks(), settings.store().name().toLowerCase(java.util.Locale.ROOT),
        settings.strict() ? ", strict" : "", settings.outbox() == KafkaFenceSettings.Outbox.DEDUPE
            ? ", outbox events deduplicated" : "", settings.missing() == KafkaFenceSettings.Missing.PASS ? "passed"
            : "quarantined", settings.deadLetterTopic() == null ? "dropped"
            : "sent to " + settings.deadLetterTopic());
  }

  /**
   * Whether Micrometer can be loaded by the fence's class loader. Checked here, not in {@link MicrometerBinding}: the
   * JVM verifies a class when it is first used, and verifying that one loads Micrometer's types (a consumer without
   * Micrometer would fail with NoClassDefFoundError).
   */
  private static boolean micrometerAvailable() {
    try {
      Class.forName("io.micrometer.core.instrument.Metrics", false, FencingConsumerInterceptor.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private PartitionFenceStore store(KafkaFenceSettings settings) {
    if (settings.store() == KafkaFenceSettings.Store.MEMORY) {
      return MEMORY;
    }
    if (settings.dataSource() != null) {
      return jdbc(settings.dataSource(), settings);
    }
    if (settings.jdbcDriver() != null) {
      try {
        Class.forName(settings.jdbcDriver(), true, FencingConsumerInterceptor.class.getClassLoader());
      } catch (ClassNotFoundException | LinkageError e) {
        throw new ConfigException(KafkaFenceSettings.JDBC_DRIVER, settings.jdbcDriver(), "cannot load it: " + e);
      }
    }
    try {
      DriverManager.getDriver(settings.jdbcUrl());
    } catch (SQLException e) {
      throw new ConfigException(KafkaFenceSettings.JDBC_URL, settings.jdbcUrl(), "no JDBC driver on the class path "
          + "accepts this URL: add the database's driver (or name it in " + KafkaFenceSettings.JDBC_DRIVER + ")");
    }
    SingleConnectionDataSource ds = new SingleConnectionDataSource(settings.jdbcUrl(), settings.jdbcUser(),
        settings.jdbcPassword());
    PartitionFenceStore jdbc = jdbc(ds, settings);
    this.connection = ds;
    // After any failure the single connection is dropped: the next attempt starts on a fresh one.
    return new PartitionFenceStore() {
      @Override
      public List<Advance> advances(String lock, String topic, int partition, long from, long to) {
        try {
          return jdbc.advances(lock, topic, partition, from, to);
        } catch (RuntimeException e) {
          ds.reset();
          throw e;
        }
      }

      @Override
      public Advance record(String lock, String topic, int partition, Advance advance) {
        try {
          return jdbc.record(lock, topic, partition, advance);
        } catch (RuntimeException e) {
          ds.reset();
          throw e;
        }
      }

      @Override
      public Position firstCopy(String lock, String eventId, Position here) {
        try {
          return jdbc.firstCopy(lock, eventId, here);
        } catch (RuntimeException e) {
          ds.reset();
          throw e;
        }
      }
    };
  }

  private static PartitionFenceStore jdbc(javax.sql.DataSource ds, KafkaFenceSettings settings) {
    try {
      return new JdbcPartitionFenceStore(ds, settings.jdbcSchema());
    } catch (IllegalArgumentException e) {
      throw new ConfigException(KafkaFenceSettings.JDBC_SCHEMA, settings.jdbcSchema(), e.getMessage());
    }
  }

  @Override
  public ConsumerRecords<K, V> onConsume(ConsumerRecords<K, V> records) {
    RecordFence.Outcome<K, V> outcome = fence.filter(records);
    List<Quarantine> quarantined = outcome.quarantined();
    if (!quarantined.isEmpty()) {
      if (deadLetters != null) {
        deadLetters.send(quarantined);
      }
      warn(records.count(), quarantined);
    }
    return outcome.accepted();
  }

  /** At most one warning per interval: a stale holder still producing must not flood the log. */
  private void warn(int total, List<Quarantine> quarantined) {
    long now = System.nanoTime();
    boolean warn = now - lastWarn >= WARN_INTERVAL_NANOS;
    if (!warn && !LOG.isDebugEnabled()) {
      return;
    }
    Map<Rejection, Long> byReason = quarantined.stream().collect(Collectors.groupingBy(Quarantine::reason,
        () -> new EnumMap<>(Rejection.class), Collectors.counting()));
    String message = "fencing: quarantined {} of {} records ({}), {}; first: {}";
    Object[] args = {quarantined.size(), total, byReason, deadLetters == null ? "dropped" : "dead-lettered",
        quarantined.get(0).detail()};
    if (warn) {
      lastWarn = now;
      LOG.warn(message + " (further warnings within 10 s are logged at DEBUG)", args);
    } else {
      LOG.debug(message, args);
    }
  }

  @Override
  public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
    // The fence moves when records are accepted (onConsume), not on commit: see README.md, "State".
  }

  @Override
  public void close() {
    if (deadLetters != null) {
      deadLetters.close();
      deadLetters = null;
    }
    if (connection != null) {
      connection.close();
      connection = null;
    }
  }
}
