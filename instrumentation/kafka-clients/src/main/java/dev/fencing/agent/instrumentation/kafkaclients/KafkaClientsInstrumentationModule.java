package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.kafka.KafkaFencing;
import java.util.List;

/**
 * org.apache.kafka:kafka-clients: the producer (tagging, blocking) and the consumer (the token of the record being
 * processed becomes current on the polling thread). Switch: fencing.instrumentation.kafka-clients.enabled. */
public final class KafkaClientsInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "kafka-clients";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new KafkaProducerInstrumentation(), new RecordAccumulatorInstrumentation(),
        new ProducerBatchInstrumentation(), new ConsumerRecordsInstrumentation(),
        new KafkaConsumerInstrumentation());
  }

  @Override
  public void install(AgentContext context) {
    KafkaFencing.install(context);
  }
}
