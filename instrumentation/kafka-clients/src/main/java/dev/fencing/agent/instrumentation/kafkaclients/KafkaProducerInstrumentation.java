package dev.fencing.agent.instrumentation.kafkaclients;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * KafkaProducer itself, not the Producer interface: wrappers and decorators end in it, and MockProducer sends
 * nothing. Only {@code send(record, callback)}: {@code send(record)} calls it (3.x and 4.x), so each record passes
 * once; hooking the private doSend instead would also see the interceptors' copy, but private names change more often.
 * {@code beginTransaction()} and {@code commitTransaction()}: a transaction's commit is judged by the grants its
 * records toward unfenced topics were tagged under.
 */
final class KafkaProducerInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "org/apache/kafka/clients/producer/KafkaProducer";
  }

  @Override
  public String className() {
    return "org.apache.kafka.clients.producer.KafkaProducer";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("org.apache.kafka.clients.producer.KafkaProducer");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("send").and(isPublic()).and(takesArguments(2))
        .and(takesArgument(0, named("org.apache.kafka.clients.producer.ProducerRecord")))
        .and(takesArgument(1, named("org.apache.kafka.clients.producer.Callback"))), SendAdvice.class);
    t.applyAdvice(named("beginTransaction").and(isPublic()).and(takesArguments(0)), BeginTransactionAdvice.class);
    t.applyAdvice(named("commitTransaction").and(isPublic()).and(takesArguments(0)), CommitTransactionAdvice.class);
  }
}
