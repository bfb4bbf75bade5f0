package dev.fencing.faults;

import dev.fencing.faults.History.Accepted;
import dev.fencing.fence.kafka.FencingConsumerInterceptor;
import dev.fencing.fence.kafka.KafkaFenceMetrics;
import dev.fencing.protocol.KafkaHeaderNames;
import dev.fencing.protocol.Rejection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The fenced Kafka resource: a consumer of the workers' topic with the consumer fence (in-memory store), enabled by
 * properties as a consumer owner would, and a plain reader of the fence's dead-letter topic. A record the consumer's
 * code receives is accepted, in offset order, with the token of its header; a dead-lettered one was rejected by the
 * fence. One partition, so offset order is the order the fence judged.
 */
final class KafkaSink implements AutoCloseable {
  private final String lock;
  private final TopicPartition main;
  private final TopicPartition deadLetters;
  private final List<Accepted> accepted = new ArrayList<>();
  private final Set<String> quarantined = new HashSet<>();
  private final Thread mainThread;
  private final Thread dlqThread;
  private volatile boolean closed;
  private volatile long mainPosition;
  private volatile long dlqPosition;
  private volatile RuntimeException failure;

  KafkaSink(String bootstrap, String topic, String deadLetterTopic, String lock) {
    this.lock = lock;
    this.main = new TopicPartition(topic, 0);
    this.deadLetters = new TopicPartition(deadLetterTopic, 0);
    Properties fenced = consumerProperties(bootstrap);
    fenced.put("interceptor.classes", FencingConsumerInterceptor.class.getName());
    fenced.put("fencing.fence.locks", lock);
    fenced.put("fencing.fence.store", "memory");
    fenced.put("fencing.fence.dead-letter.topic", deadLetterTopic);
    fenced.put("fencing.fence.metrics.micrometer", "false");
    KafkaConsumer<String, String> fencedConsumer = new KafkaConsumer<>(fenced);
    KafkaConsumer<String, String> dlqConsumer = new KafkaConsumer<>(consumerProperties(bootstrap));
    mainThread = poller("kafka-sink", fencedConsumer, main, record -> {
      synchronized (accepted) {
        accepted.add(new Accepted("kafka", record.offset() + 1, record.key(), token(record),
            record.timestamp()));
      }
    }, p -> mainPosition = p);
    dlqThread = poller("kafka-sink-dlq", dlqConsumer, deadLetters, record -> {
      synchronized (quarantined) {
        quarantined.add(record.key());
      }
    }, p -> dlqPosition = p);
  }

  private interface Sink {
    void accept(ConsumerRecord<String, String> record);
  }

  private interface Position {
    void set(long position);
  }

  private Thread poller(String name, KafkaConsumer<String, String> consumer, TopicPartition tp, Sink sink,
      Position position) {
    Thread t = new Thread(() -> {
      try (consumer) {
        consumer.assign(List.of(tp));
        consumer.seekToBeginning(List.of(tp));
        while (!closed) {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
            sink.accept(r);
          }
          position.set(consumer.position(tp));
        }
      } catch (RuntimeException e) {
        if (!closed) {
          failure = e;
        }
      }
    }, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  /**
   * Waits until both readers have reached the given end offsets (of the topic and of the dead-letter topic, taken
   * after the last write), so that every record is either accepted or quarantined.
   */
  boolean awaitCaughtUp(Map<TopicPartition, Long> ends, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (failure != null) {
        throw new IllegalStateException("the Kafka sink failed: " + failure, failure);
      }
      if (mainPosition >= ends.getOrDefault(main, 0L) && dlqPosition >= ends.getOrDefault(deadLetters, 0L)) {
        return true;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  TopicPartition mainPartition() {
    return main;
  }

  TopicPartition deadLetterPartition() {
    return deadLetters;
  }

  List<Accepted> accepted() {
    synchronized (accepted) {
      return List.copyOf(accepted);
    }
  }

  Set<String> quarantined() {
    synchronized (quarantined) {
      return Set.copyOf(quarantined);
    }
  }

  /** The consumer fence's {@code fencing_fence_rejections_total} for the lock, all reasons. */
  long fenceRejections() {
    long sum = 0;
    for (Rejection r : KafkaFenceMetrics.REASONS) {
      sum += KafkaFenceMetrics.global().rejections(lock, r);
    }
    return sum;
  }

  @Override
  public void close() {
    closed = true;
    try {
      mainThread.join(5_000);
      dlqThread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static long token(ConsumerRecord<String, String> record) {
    Header h = record.headers().lastHeader(KafkaHeaderNames.TOKEN);
    return h == null ? 0 : Long.parseLong(new String(h.value(), StandardCharsets.UTF_8).strip());
  }

  private static Properties consumerProperties(String bootstrap) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.deserializer", StringDeserializer.class.getName());
    p.put("value.deserializer", StringDeserializer.class.getName());
    p.put("enable.auto.commit", "false");
    p.put("auto.offset.reset", "earliest");
    return p;
  }
}
