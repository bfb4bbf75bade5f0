package dev.fencing.agent.instrumentation.kafkaclients;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * KafkaConsumer.poll (both overloads): a new poll ends the processing of the previous batch's last record on this
 * thread. KafkaConsumer itself, the public entry point in 3.x and 4.x (4.x delegates to internal consumers).
 */
final class KafkaConsumerInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "org/apache/kafka/clients/consumer/KafkaConsumer";
  }

  @Override
  public String className() {
    return "org.apache.kafka.clients.consumer.KafkaConsumer";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("org.apache.kafka.clients.consumer.KafkaConsumer");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("poll").and(isPublic()).and(takesArguments(1)), PollAdvice.class);
  }
}
