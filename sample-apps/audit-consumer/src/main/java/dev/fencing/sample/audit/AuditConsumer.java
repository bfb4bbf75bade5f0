package dev.fencing.sample.audit;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.fence.kafka.FencingConsumerInterceptor;
import dev.fencing.fence.kafka.KafkaFenceMetrics;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Audits the ledger workers' transfer events. Its code knows nothing of tokens: the consumer fence sits in front of
 * it by configuration alone ({@code interceptor.classes} and {@code fencing.fence.*} properties), with the fence of
 * each partition in the ledger database's {@code fencing_kafka_fence} table, beside the SQL fence's. Records of a stale
 * lock holder are dropped before {@code poll} returns; the fence counts them.
 *
 * <p>Prints {@code CONSUMED <epoch ms> <key> <value>} per record and {@code POSITION <partition> <offset>} when its
 * position moves (dropped records move it too), and serves the fence's counters at {@code GET /metrics}. Arguments,
 * {@code key=value}: kafka, topic, fence-jdbc, metrics-port, lock (default ledger).
 */
public final class AuditConsumer {
  private AuditConsumer() {}

  public static void main(String[] args) throws IOException {
    Settings s = Settings.parse(args);
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, s.get("kafka"));
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "audit");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    // The consumer fence: nothing else in this class refers to fencing.
    p.put(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, FencingConsumerInterceptor.class.getName());
    p.put("fencing.fence.locks", s.get("lock", "ledger"));
    p.put("fencing.fence.jdbc.url", s.get("fence-jdbc"));

    AtomicBoolean running = new AtomicBoolean(true);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      serveMetrics(Integer.parseInt(s.get("metrics-port")));
      Thread main = Thread.currentThread();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        running.set(false);
        consumer.wakeup();
        try {
          main.join(3000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "audit-consumer-shutdown"));
      consumer.subscribe(List.of(s.get("topic")), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          System.out.println("CONSUMER ASSIGNED " + partitions);
          System.out.flush();
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}
      });
      long lastPosition = -1;
      while (running.get()) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        for (ConsumerRecord<String, String> r : records) {
          System.out.println("CONSUMED " + System.currentTimeMillis() + " " + r.key() + " " + r.value());
        }
        for (TopicPartition tp : consumer.assignment()) {
          long position = consumer.position(tp);
          if (position != lastPosition) {
            lastPosition = position;
            System.out.println("POSITION " + tp + " " + position);
          }
        }
        System.out.flush();
        consumer.commitAsync();
      }
    } catch (WakeupException shuttingDown) {
      // Shutdown hook.
    } catch (RuntimeException e) {
      e.printStackTrace();
      System.exit(1); // the metrics server's thread would keep a broken consumer's JVM alive
    }
  }

  private static void serveMetrics(int port) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
    server.createContext("/metrics", ex -> {
      byte[] body = KafkaFenceMetrics.global().prometheusText().getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
      ex.sendResponseHeaders(200, body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    });
    server.start();
  }
}
