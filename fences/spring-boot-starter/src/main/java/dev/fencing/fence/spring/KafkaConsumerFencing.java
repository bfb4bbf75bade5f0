package dev.fencing.fence.spring;

import dev.fencing.fence.kafka.FencingConsumerInterceptor;
import dev.fencing.fence.kafka.KafkaFenceSettings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;

/**
 * Puts the Kafka consumer fence on the {@link DefaultKafkaConsumerFactory} beans named in
 * {@code fencing.fence.kafka.consumer-factories} ({@code *}: every one): {@link FencingConsumerInterceptor} first in
 * the factory's {@code interceptor.classes} (after it, the application's own interceptors see only accepted records),
 * and the interceptor's {@code fencing.fence.*} settings from the starter's properties, with the application's
 * DataSource as the JDBC store. The settings are validated here, so a bad one fails the start, naming the key. A named
 * factory that does not exist fails the start too: a fence that silently is not there is worse than none.
 */
public final class KafkaConsumerFencing implements BeanPostProcessor, SmartInitializingSingleton, BeanFactoryAware {

  private static final Log LOG = LogFactory.getLog(KafkaConsumerFencing.class);
  private static final String ALL = "*";

  private final Environment environment;
  private final ObjectProvider<DataSource> dataSource;
  private final Set<String> fenced = new LinkedHashSet<>();
  private FencingProperties properties;
  private ListableBeanFactory beans;

  KafkaConsumerFencing(Environment environment, ObjectProvider<DataSource> dataSource) {
    this.environment = environment;
    this.dataSource = dataSource;
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    if (beanFactory instanceof ListableBeanFactory l) {
      this.beans = l;
    }
  }

  private FencingProperties properties() {
    if (properties == null) {
      properties = Binder.get(environment).bindOrCreate(FencingProperties.PREFIX, FencingProperties.class);
    }
    return properties;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof DefaultKafkaConsumerFactory<?, ?> factory && selected(beanName)) {
      factory.updateConfigs(settings(factory.getConfigurationProperties()));
      fenced.add(beanName);
      LOG.info("fencing: Kafka consumer fence on for the consumers of '" + beanName + "'");
    }
    return bean;
  }

  private boolean selected(String beanName) {
    List<String> names = properties().getKafka().getConsumerFactories();
    return names.contains(ALL) || names.contains(beanName);
  }

  @Override
  public void afterSingletonsInstantiated() {
    List<String> missing = new ArrayList<>(properties().getKafka().getConsumerFactories());
    missing.remove(ALL);
    missing.removeAll(fenced);
    if (!missing.isEmpty()) {
      String[] existing = beans == null ? new String[0]
          : beans.getBeanNamesForType(DefaultKafkaConsumerFactory.class, false, false);
      throw new IllegalStateException("fencing: " + FencingProperties.PREFIX + ".kafka.consumer-factories names "
          + missing + ", but the application has no DefaultKafkaConsumerFactory bean of that name (it has "
          + Arrays.toString(existing) + "): those consumers would not be fenced");
    }
  }

  /** What the factory's configuration gets: the interceptor first, and the fence's settings. */
  Map<String, Object> settings(Map<String, Object> current) {
    FencingProperties p = properties();
    FencingProperties.Kafka kafka = p.getKafka();
    Map<String, Object> s = new LinkedHashMap<>();
    s.put(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, interceptors(current.get(
        ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG)));
    s.put(KafkaFenceSettings.LOCKS, String.join(",", FencingProperties.locks(kafka.getLocks(), p.getLocks(),
        FencingProperties.PREFIX + ".kafka.locks")));
    s.put(KafkaFenceSettings.STRICT, String.valueOf(p.isStrict()));
    s.put(KafkaFenceSettings.MISSING, p.isPermissive() ? "pass" : "quarantine");
    if (p.getSigningKeyFile() != null && !p.getSigningKeyFile().isBlank()) {
      s.put(KafkaFenceSettings.SIGNING_KEY_FILE, p.getSigningKeyFile());
    }
    if (!kafka.getTopics().isEmpty()) {
      s.put(KafkaFenceSettings.TOPICS, String.join(",", kafka.getTopics()));
    }
    if (kafka.getDeadLetterTopic() != null && !kafka.getDeadLetterTopic().isBlank()) {
      s.put(KafkaFenceSettings.DLQ_TOPIC, kafka.getDeadLetterTopic());
    }
    DataSource ds = FencingAutoConfiguration.dataSource(p, dataSource);
    if (ds == null) {
      s.put(KafkaFenceSettings.STORE, "memory");
    } else {
      s.put(KafkaFenceSettings.STORE, "jdbc");
      s.put(KafkaFenceSettings.JDBC_DATASOURCE, ds);
      if (p.getJdbc().getSchema() != null) {
        s.put(KafkaFenceSettings.JDBC_SCHEMA, p.getJdbc().getSchema());
      }
    }
    // The application's registries get the counters through the KafkaFenceMeterBinder bean.
    s.put(KafkaFenceSettings.MICROMETER, "false");
    kafka.getProperties().forEach((k, v) -> s.put(KafkaFenceSettings.PREFIX + k, v));
    Map<String, Object> merged = new LinkedHashMap<>(current);
    merged.putAll(s);
    try {
      KafkaFenceSettings.from(merged);
    } catch (ConfigException e) {
      throw new IllegalStateException("fencing: invalid setting for the Kafka consumer fence (from "
          + FencingProperties.PREFIX + ".*): " + e.getMessage(), e);
    }
    return s;
  }

  /** The factory's interceptors with the fence first (once). */
  static List<Object> interceptors(Object current) {
    List<Object> out = new ArrayList<>();
    out.add(FencingConsumerInterceptor.class);
    List<?> existing = current instanceof List<?> l ? l
        : current instanceof String str ? Arrays.stream(str.split(",")).map(String::trim).filter(x -> !x.isEmpty())
            .toList()
        : current == null ? List.of() : List.of(current);
    for (Object o : existing) {
      String name = o instanceof Class<?> c ? c.getName() : String.valueOf(o).trim();
      if (!name.equals(FencingConsumerInterceptor.class.getName())) {
        out.add(o);
      }
    }
    return out;
  }
}
