package dev.fencing.agent.instrumentation.kafkaclients;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * A batch in the producer's buffer: which grants its records were tagged under (noted as each record joins it,
 * {@link AppendAdvice}, forgotten when it ends or is split, {@link BatchDoneAdvice}, {@link BatchSplitAdvice}); during
 * Kafka's delivery-timeout sweep, a batch that must not leave counts as expired ({@link DeliveryTimeoutAdvice}), and
 * when Kafka then fails it, its records get the block exception rather than the sweep's TimeoutException
 * ({@link BatchFailureAdvice}).
 */
final class ProducerBatchInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "org/apache/kafka/clients/producer/internals/ProducerBatch";
  }

  @Override
  public String className() {
    return "org.apache.kafka.clients.producer.internals.ProducerBatch";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("org.apache.kafka.clients.producer.internals.ProducerBatch");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("hasReachedDeliveryTimeout").and(takesArguments(2)).and(returns(boolean.class)),
        DeliveryTimeoutAdvice.class);
    t.applyAdvice(named("completeExceptionally").and(takesArguments(2)), BatchFailureAdvice.class);
    t.applyAdvice(named("tryAppend").and(takesArguments(6)), AppendAdvice.class);
    t.applyAdvice(named("completeFutureAndFireCallbacks").and(takesArguments(3)), BatchDoneAdvice.class);
    t.applyAdvice(named("split").and(takesArguments(1)), BatchSplitAdvice.class);
  }
}
