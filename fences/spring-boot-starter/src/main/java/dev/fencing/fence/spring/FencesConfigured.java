package dev.fencing.fence.spring;

import java.util.List;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * A fence is registered only where the application says so: the HTTP filter when {@code fencing.fence.http.paths}
 * lists a path, the Kafka fence when {@code fencing.fence.kafka.consumer-factories} lists a consumer factory. A list
 * bound through the Binder, so that YAML lists and comma-separated values both count.
 */
abstract class FencesConfigured extends SpringBootCondition {

  private final String key;

  FencesConfigured(String key) {
    this.key = key;
  }

  @Override
  public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
    List<String> values = Binder.get(context.getEnvironment()).bind(key, Bindable.listOf(String.class))
        .orElse(List.of());
    return values.stream().anyMatch(v -> !v.isBlank())
        ? ConditionOutcome.match(key + " is " + values)
        : ConditionOutcome.noMatch(key + " is not set");
  }

  static final class HttpPaths extends FencesConfigured {
    HttpPaths() {
      super(FencingProperties.PREFIX + ".http.paths");
    }
  }

  static final class KafkaConsumerFactories extends FencesConfigured {
    KafkaConsumerFactories() {
      super(FencingProperties.PREFIX + ".kafka.consumer-factories");
    }
  }
}
