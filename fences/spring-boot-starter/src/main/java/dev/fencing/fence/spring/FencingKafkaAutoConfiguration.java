package dev.fencing.fence.spring;

import dev.fencing.fence.kafka.KafkaFenceMeterBinder;
import io.micrometer.core.instrument.binder.MeterBinder;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The Kafka consumer fence on the consumer factories named in {@code fencing.fence.kafka.consumer-factories}
 * ({@link KafkaConsumerFencing}: the interceptor and its settings added to each factory's configuration, so every
 * consumer it creates is fenced), and, with Micrometer, the fence's {@link KafkaFenceMeterBinder}.
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnProperty(prefix = FencingProperties.PREFIX, name = "enabled", matchIfMissing = true)
@ConditionalOnClass(name = {"org.springframework.kafka.core.DefaultKafkaConsumerFactory",
    "dev.fencing.fence.kafka.FencingConsumerInterceptor"})
@Conditional(FencesConfigured.KafkaConsumerFactories.class)
public class FencingKafkaAutoConfiguration {

  /** Static: a post-processor, created before the other beans; it reads the DataSource only when it needs it. */
  @Bean
  public static KafkaConsumerFencing fencingKafkaConsumerFencing(Environment environment,
      ObjectProvider<DataSource> dataSource) {
    return new KafkaConsumerFencing(environment, dataSource);
  }

  /** Only when the application has Micrometer: the binder's class needs it. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterBinder.class)
  static class Metrics {

    @Bean
    @ConditionalOnMissingBean
    KafkaFenceMeterBinder fencingKafkaFenceMeterBinder() {
      return new KafkaFenceMeterBinder();
    }
  }
}
