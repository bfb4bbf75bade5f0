package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.instrumentation.AgentContext;
import dev.fencing.agent.instrumentation.InstrumentationModule;
import dev.fencing.agent.instrumentation.TypeInstrumentation;
import dev.fencing.agent.instrumentation.kafka.KafkaFencing;
import java.util.List;

/** org.apache.kafka:kafka-clients, the producer. Switch: fencing.instrumentation.kafka-clients.enabled. */
public final class KafkaClientsInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "kafka-clients";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new KafkaProducerInstrumentation());
  }

  @Override
  public void install(AgentContext context) {
    KafkaFencing.install(context.config());
  }
}
