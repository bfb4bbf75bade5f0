package dev.fencing.faults;

import dev.fencing.faults.History.Accepted;
import dev.fencing.fence.kafka.FencingConsumerInterceptor;
import dev.fencing.fence.kafka.KafkaFenceMetrics;
import dev.fencing.protocol.KafkaHeaderNames;
import dev.fencing.protocol.TokenGrammar;
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
 * code receives is accepted, in its partition's offset order, with the lock and token of its headers; a
 * dead-lettered one was rejected by the fence. The fence judges in the order the consumer polls, which keeps each
 * partition's offset order, so the checker judges each partition on its own.
 *
 * <p>A third reader, without the fence, reads the unfenced topic (one partition, not in the agents' {@code
 * fenced.kafka}): each record arrived in offset order with the token of its headers (0 if none).
 */
final class KafkaSink implements AutoCloseable {
  private final List<String> locks;
  private final List<TopicPartition> main;
  private final TopicPartition deadLetters;
  private final TopicPartition unfenced;
  private final List<Accepted> arrived = new ArrayList<>();
  private final Thread unfencedThread;
  private final List<Accepted> accepted = new ArrayList<>();
  private final Set<String> quarantined = new HashSet<>();
  private final Thread mainThread;
  private final Thread dlqThread;
  private volatile boolean closed;
  private final Map<TopicPartition, Long> positions = new java.util.concurrent.ConcurrentHashMap<>();
  private volatile RuntimeException failure;

  KafkaSink(String bootstrap, String topic, int partitions, String deadLetterTopic, String unfencedTopic,
      List<String> locks) {
    this.locks = List.copyOf(locks);
    this.main = java.util.stream.IntStream.range(0, partitions).mapToObj(p -> new TopicPartition(topic, p)).toList();
    this.deadLetters = new TopicPartition(deadLetterTopic, 0);
    this.unfenced = new TopicPartition(unfencedTopic, 0);
    Properties fenced = consumerProperties(bootstrap);
    fenced.put("interceptor.classes", FencingConsumerInterceptor.class.getName());
    fenced.put("fencing.fence.locks", String.join(",", locks));
    fenced.put("fencing.fence.store", "memory");
    fenced.put("fencing.fence.dead-letter.topic", deadLetterTopic);
    fenced.put("fencing.fence.metrics.micrometer", "false");
    KafkaConsumer<String, String> fencedConsumer = new KafkaConsumer<>(fenced);
    KafkaConsumer<String, String> dlqConsumer = new KafkaConsumer<>(consumerProperties(bootstrap));
    mainThread = poller("kafka-sink", fencedConsumer, main, record -> {
      synchronized (accepted) {
        accepted.add(new Accepted("kafka", record.offset() + 1, record.key(), token(record),
            record.timestamp(), fencing(record, 1), record.partition()));
      }
    });
    dlqThread = poller("kafka-sink-dlq", dlqConsumer, List.of(deadLetters), record -> {
      synchronized (quarantined) {
        quarantined.add(record.key());
      }
    });
    unfencedThread = poller("kafka-sink-unfenced", new KafkaConsumer<>(consumerProperties(bootstrap)),
        List.of(unfenced), record -> {
          synchronized (arrived) {
            String lock = fencing(record, 1);
            arrived.add(new Accepted("kafka-unfenced", record.offset() + 1, record.key(), token(record),
                record.timestamp(), lock == null ? "" : lock, -1));
          }
        });
  }

  TopicPartition unfencedPartition() {
    return unfenced;
  }

  /** The records of the unfenced topic, in offset order. */
  List<Accepted> unfencedArrivals() {
    synchronized (arrived) {
      return List.copyOf(arrived);
    }
  }

  private interface Sink {
    void accept(ConsumerRecord<String, String> record);
  }

  private Thread poller(String name, KafkaConsumer<String, String> consumer, List<TopicPartition> tps, Sink sink) {
    Thread t = new Thread(() -> {
      try (consumer) {
        consumer.assign(tps);
        consumer.seekToBeginning(tps);
        while (!closed) {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
            sink.accept(r);
          }
          for (TopicPartition tp : tps) {
            positions.put(tp, consumer.position(tp));
          }
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
      if (ends.entrySet().stream().allMatch(e -> positions.getOrDefault(e.getKey(), -1L) >= e.getValue())) {
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

  List<TopicPartition> mainPartitions() {
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

  /** The consumer fence's {@code fencing_fence_rejections_total} for the locks, all reasons. */
  long fenceRejections() {
    long sum = 0;
    for (String lock : locks) {
      for (Rejection r : KafkaFenceMetrics.REASONS) {
        sum += KafkaFenceMetrics.global().rejections(lock, r);
      }
    }
    return sum;
  }

  @Override
  public void close() {
    closed = true;
    try {
      mainThread.join(5_000);
      dlqThread.join(5_000);
      unfencedThread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static long token(ConsumerRecord<String, String> record) {
    String token = fencing(record, 0);
    try {
      return token == null ? 0 : Long.parseLong(token);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** Field {@code i} of the record's {@code fencing} header (0 token, 1 lock, 2 grant), or null. */
  private static String fencing(ConsumerRecord<String, String> record, int i) {
    String value = header(record, KafkaHeaderNames.FENCING);
    return value == null ? null : TokenGrammar.kafkaFields(value)[i];
  }

  private static String header(ConsumerRecord<String, String> record, String name) {
    Header h = record.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8).strip();
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
