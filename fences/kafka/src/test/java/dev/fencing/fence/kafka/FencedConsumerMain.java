package dev.fencing.fence.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * A plain consumer with the fence enabled by properties only, run in a child JVM by {@link KafkaPartitionFenceIT}
 * (with the kafka-clients version under test, and to be killed with SIGKILL). Prints {@code DELIVERED <partition>
 * <offset> <value>} for each record the application gets (and, in subscribe mode, {@code BATCH <count>} before each
 * poll's records). Args: bootstrap servers, topic, group, JDBC URL, lock, mode.
 * Modes: {@code order:0,1,...} assigns the partitions one after the other, reads each to its end, prints {@code DONE}
 * and exits; {@code subscribe:<max.poll.records>:<ms per record>} subscribes and processes slowly, committing after
 * each batch, until killed.
 */
public final class FencedConsumerMain {

  private FencedConsumerMain() {
  }

  public static void main(String[] args) throws Exception {
    String topic = args[1];
    String mode = args[5];
    Properties p = new Properties();
    p.put("bootstrap.servers", args[0]);
    p.put("group.id", args[2]);
    p.put("auto.offset.reset", "earliest");
    p.put("enable.auto.commit", "false");
    p.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    p.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    p.put("interceptor.classes", "dev.fencing.fence.kafka.FencingConsumerInterceptor");
    p.put("fencing.fence.locks", args[4]);
    p.put("fencing.fence.jdbc.url", args[3]);
    p.put("fencing.fence.metrics.micrometer", "false");
    // A killed member's partitions move after its session times out: the broker's minimum, not 45 s.
    p.put("session.timeout.ms", "6000");
    p.put("heartbeat.interval.ms", "1000");
    String[] m = mode.split(":");
    if (m[0].equals("subscribe")) {
      p.put("max.poll.records", m[1]);
    }
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      System.out.println("CONSUMER STARTED kafka-clients " + clientsVersion());
      System.out.flush();
      if (m[0].equals("order")) {
        for (String part : m[1].split(",")) {
          TopicPartition tp = new TopicPartition(topic, Integer.parseInt(part));
          consumer.assign(List.of(tp));
          consumer.seekToBeginning(List.of(tp));
          long end = consumer.endOffsets(List.of(tp)).get(tp);
          while (consumer.position(tp) < end) {
            print(consumer.poll(Duration.ofMillis(200)), 0);
          }
        }
        System.out.println("DONE");
        return;
      }
      long sleep = Long.parseLong(m[2]);
      consumer.subscribe(List.of(topic));
      while (true) {
        var batch = consumer.poll(Duration.ofMillis(200));
        if (!batch.isEmpty()) {
          System.out.println("BATCH " + batch.count());
        }
        print(batch, sleep);
        consumer.commitSync();
      }
    }
  }

  private static void print(Iterable<ConsumerRecord<String, String>> records, long sleep) throws InterruptedException {
    for (ConsumerRecord<String, String> r : records) {
      System.out.println("DELIVERED " + r.partition() + " " + r.offset() + " " + r.value());
      System.out.flush();
      if (sleep > 0) {
        Thread.sleep(sleep);
      }
    }
  }

  /** The kafka-clients version on the class path, from the properties file every release has. */
  private static String clientsVersion() throws java.io.IOException {
    Properties version = new Properties();
    try (var in = KafkaConsumer.class.getClassLoader().getResourceAsStream("kafka/kafka-version.properties")) {
      if (in != null) {
        version.load(in);
      }
    }
    return version.getProperty("version", "(unknown)");
  }

  /** The values of the DELIVERED lines of {@code output}, in order. */
  static List<String> delivered(String output) {
    List<String> out = new ArrayList<>();
    for (String line : output.split("\n")) {
      if (line.startsWith("DELIVERED ")) {
        out.add(line.split(" ", 4)[3].trim());
      }
    }
    return out;
  }

}
