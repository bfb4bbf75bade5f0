package dev.fencing.agent.instrumentation.kafkaclients;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The producer's buffer (kafka-clients 3.x and 4.x keep the same shape here): the decision taken at send() is taken
 * again for the batches waiting in it, on the producer's I/O thread, each time it looks for data to send.
 * <ul>
 *   <li>{@code ready(MetadataSnapshot, long)}, every turn of the I/O thread, reachable broker or not: batches never
 *       sent that must not leave are failed ({@link ReadyAdvice}).</li>
 *   <li>{@code shouldBackoff(boolean, ProducerBatch, long)}, asked for the first batch of each partition by ready()
 *       and by drain() right before it takes the batch for a produce request: a batch that must not leave is held
 *       back ({@link BackoffAdvice}), whatever it is (a retry of a batch sent before the deadline, one the deadline
 *       caught between ready() and drain()).</li>
 *   <li>{@code expiredBatches(long)}: Kafka's own sweep for batches past delivery.timeout.ms, which fails held-back
 *       retries through the producer's own path (sequence numbers, transactions) ({@link ExpirySweepAdvice},
 *       {@link DeliveryTimeoutAdvice} on ProducerBatch).</li>
 * </ul>
 */
final class RecordAccumulatorInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "org/apache/kafka/clients/producer/internals/RecordAccumulator";
  }

  @Override
  public String className() {
    return "org.apache.kafka.clients.producer.internals.RecordAccumulator";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("org.apache.kafka.clients.producer.internals.RecordAccumulator");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("ready").and(takesArguments(2))
        .and(takesArgument(0, named("org.apache.kafka.clients.MetadataSnapshot"))), ReadyAdvice.class);
    t.applyAdvice(named("shouldBackoff").and(takesArguments(3)).and(returns(boolean.class))
        .and(takesArgument(1, named("org.apache.kafka.clients.producer.internals.ProducerBatch"))),
        BackoffAdvice.class);
    t.applyAdvice(named("expiredBatches").and(takesArguments(1)), ExpirySweepAdvice.class);
  }
}
