package dev.fencing.agent.it.apps;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;

/**
 * An ordinary Kafka consumer (no fencing code): for each record, inserts its value into {@code ledger(note)} and prints
 * {@code CONSUMED <value> OK} or {@code CONSUMED <value> SQLSTATE <state>}. Args: bootstrap servers, topic, JDBC URL.
 */
public final class KafkaConsumerApp {
  private KafkaConsumerApp() {}

  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", args[0]);
    // A group of its own per topic: a killed consumer of an earlier run in the same group would hold the next
    // one's rebalance back for the group's session timeout (45 s).
    p.put("group.id", "ledger-consumer-" + args[1]);
    p.put("auto.offset.reset", "earliest");
    p.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    p.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p);
        Connection db = DriverManager.getConnection(args[2])) {
      consumer.subscribe(List.of(args[1]));
      System.out.println("APP STARTED");
      System.out.flush();
      while (true) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        for (ConsumerRecord<String, String> r : records) {
          String outcome;
          try (PreparedStatement ps = db.prepareStatement("INSERT INTO ledger (note) VALUES (?)")) {
            ps.setString(1, r.value());
            ps.executeUpdate();
            outcome = "OK";
          } catch (SQLException e) {
            outcome = "SQLSTATE " + e.getSQLState();
          }
          System.out.println("CONSUMED " + r.value() + " " + outcome);
          System.out.flush();
        }
      }
    }
  }
}
