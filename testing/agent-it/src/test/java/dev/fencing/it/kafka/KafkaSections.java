package dev.fencing.it.kafka;

import dev.fencing.agent.it.apps.KafkaApp;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Two methods for {@code KafkaApp} to send in, each declared as the section of its own lock by KafkaBufferedSendIT
 * ({@code fencing.sections=dev.fencing.it.kafka.KafkaSections#burstInA@ledger-a,...#burstInB@ledger-b}). Outside
 * {@code dev.fencing.agent.}, whose classes the agent never instruments.
 */
public final class KafkaSections {
  private KafkaSections() {}

  public static String burstInA(KafkaProducer<String, String> producer, String topic, String prefix, int n) {
    return KafkaApp.burst(producer, topic, prefix, n);
  }

  public static String burstInB(KafkaProducer<String, String> producer, String topic, String prefix, int n) {
    return KafkaApp.burst(producer, topic, prefix, n);
  }
}
