package dev.fencing.fence.spring;

import dev.fencing.fence.store.FencePolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;

/**
 * The starter's settings, {@code fencing.fence.*} in {@code application.yml} (this module's README.md and
 * docs/reference/fences.md have the table). The fences themselves validate names and values and fail the start naming the key.
 */
@ConfigurationProperties(prefix = FencingProperties.PREFIX)
public class FencingProperties {

  public static final String PREFIX = "fencing.fence";

  /** Where the fences keep the highest token per lock. */
  public enum Store {
    /** {@code jdbc} when the application has a DataSource, else {@code memory}. */
    AUTO,
    /** The application's DataSource: {@code fencing_fence} (HTTP) and {@code fencing_kafka_fence} (Kafka). */
    JDBC,
    /** This JVM only, lost on restart. */
    MEMORY
  }

  /** Turns the whole starter off. */
  private boolean enabled = true;
  /** Lock names whose tokens the fences accept. */
  private List<String> locks = new ArrayList<>();
  /** Accept only token > the fence (per-request tokens). */
  private boolean strict;
  /** Rollout: requests and records without a token pass. */
  private boolean permissive;
  /** File with the agents' signing key: only signed tokens are accepted. */
  private String signingKeyFile;
  private Store store = Store.AUTO;
  private final Jdbc jdbc = new Jdbc();
  private final Http http = new Http();
  private final Kafka kafka = new Kafka();

  public static class Jdbc {
    /** Schema (MariaDB/MySQL: database) of the fence tables; the connections' default when unset. */
    private String schema;

    public String getSchema() {
      return schema;
    }

    public void setSchema(String schema) {
      this.schema = schema;
    }
  }

  public static class Http {
    /** Fenced path prefixes, matched by whole segments; the filter is registered only when there is one. */
    private List<String> paths = new ArrayList<>();
    /** Fenced methods (the fence's default: POST, PUT, PATCH, DELETE). */
    private List<String> methods = new ArrayList<>(FencePolicy.DEFAULT_METHODS);
    /** How long the first request of a new token waits for older requests before 503. */
    private Duration drainTimeout = FencePolicy.DEFAULT_DRAIN_TIMEOUT;
    /** The servlet URL patterns of the filter registration. */
    private List<String> urlPatterns = new ArrayList<>(List.of("/*"));
    /** The filter's order: early, before anything that writes. */
    private int order = Ordered.HIGHEST_PRECEDENCE + 100;
    /** Locks of this fence, when not {@code fencing.fence.locks}. */
    private List<String> locks = new ArrayList<>();

    public List<String> getPaths() {
      return paths;
    }

    public void setPaths(List<String> paths) {
      this.paths = paths;
    }

    public List<String> getMethods() {
      return methods;
    }

    public void setMethods(List<String> methods) {
      this.methods = methods;
    }

    public Duration getDrainTimeout() {
      return drainTimeout;
    }

    public void setDrainTimeout(Duration drainTimeout) {
      this.drainTimeout = drainTimeout;
    }

    public List<String> getUrlPatterns() {
      return urlPatterns;
    }

    public void setUrlPatterns(List<String> urlPatterns) {
      this.urlPatterns = urlPatterns;
    }

    public int getOrder() {
      return order;
    }

    public void setOrder(int order) {
      this.order = order;
    }

    public List<String> getLocks() {
      return locks;
    }

    public void setLocks(List<String> locks) {
      this.locks = locks;
    }
  }

  public static class Kafka {
    /** Bean names of the DefaultKafkaConsumerFactory beans to fence ({@code *}: all); none: no Kafka fence. */
    private List<String> consumerFactories = new ArrayList<>();
    /** Fenced topics; all topics the consumers read when empty. */
    private List<String> topics = new ArrayList<>();
    /** Topic that quarantined records are sent to; dropped (and counted) when unset. */
    private String deadLetterTopic;
    /** Locks of this fence, when not {@code fencing.fence.locks}. */
    private List<String> locks = new ArrayList<>();
    /** Any other interceptor setting, without its {@code fencing.fence.} prefix (e.g. dead-letter.timeout.ms). */
    private Map<String, String> properties = new LinkedHashMap<>();

    public List<String> getConsumerFactories() {
      return consumerFactories;
    }

    public void setConsumerFactories(List<String> consumerFactories) {
      this.consumerFactories = consumerFactories;
    }

    public List<String> getTopics() {
      return topics;
    }

    public void setTopics(List<String> topics) {
      this.topics = topics;
    }

    public String getDeadLetterTopic() {
      return deadLetterTopic;
    }

    public void setDeadLetterTopic(String deadLetterTopic) {
      this.deadLetterTopic = deadLetterTopic;
    }

    public List<String> getLocks() {
      return locks;
    }

    public void setLocks(List<String> locks) {
      this.locks = locks;
    }

    public Map<String, String> getProperties() {
      return properties;
    }

    public void setProperties(Map<String, String> properties) {
      this.properties = properties;
    }
  }

  /** {@code override} when set, else the shared {@code fencing.fence.locks}; fails naming both keys when neither is. */
  static List<String> locks(List<String> override, List<String> shared, String overrideKey) {
    List<String> locks = override != null && !override.isEmpty() ? override : shared;
    if (locks == null || locks.isEmpty()) {
      throw new IllegalStateException("fencing: no lock for the fence: set " + PREFIX + ".locks (or " + overrideKey
          + ") to the lock name(s) whose tokens it accepts, e.g. " + PREFIX + ".locks=ledger");
    }
    return locks;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public List<String> getLocks() {
    return locks;
  }

  public void setLocks(List<String> locks) {
    this.locks = locks;
  }

  public boolean isStrict() {
    return strict;
  }

  public void setStrict(boolean strict) {
    this.strict = strict;
  }

  public boolean isPermissive() {
    return permissive;
  }

  public void setPermissive(boolean permissive) {
    this.permissive = permissive;
  }

  public String getSigningKeyFile() {
    return signingKeyFile;
  }

  public void setSigningKeyFile(String signingKeyFile) {
    this.signingKeyFile = signingKeyFile;
  }

  public Store getStore() {
    return store;
  }

  public void setStore(Store store) {
    this.store = store;
  }

  public Jdbc getJdbc() {
    return jdbc;
  }

  public Http getHttp() {
    return http;
  }

  public Kafka getKafka() {
    return kafka;
  }
}
