package dev.fencing.agent.instrumentation.kafkaclients;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * ConsumerRecords.iterator(): what a for-each loop over a poll's records (and Iterable.forEach) uses, so the record
 * being processed is known. records(partition) and records(topic) are not wrapped: lists are indexed as often as
 * iterated, and a wrapper list would change what the application holds.
 */
final class ConsumerRecordsInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "org/apache/kafka/clients/consumer/ConsumerRecords";
  }

  @Override
  public String className() {
    return "org.apache.kafka.clients.consumer.ConsumerRecords";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("org.apache.kafka.clients.consumer.ConsumerRecords");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("iterator").and(isPublic()).and(takesArguments(0)), RecordsIteratorAdvice.class);
  }
}
