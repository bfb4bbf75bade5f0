package dev.fencing.agent.it.kafka;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.jdbc.JdbcTakeoverIT;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.apps.KafkaConsumerApp;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.Http;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.Ports;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Producer → Kafka → a consumer with the agent (no lease of its own) → PostgreSQL: while the consumer processes a
 * record, the record's token is the token of its database writes, so the fenced table takes a current record's
 * write and rejects a stale one's, and a record without a token gets no token borrowed from the one before.
 */
class KafkaConsumerCrossHopIT {
  private static KafkaBroker broker;
  private static PostgresServer pg;

  @BeforeAll
  static void start() {
    broker = KafkaBroker.start();
    pg = PostgresServer.start();
  }

  @AfterAll
  static void stop() {
    if (broker != null) {
      broker.close();
    }
    if (pg != null) {
      pg.close();
    }
  }

  /** Both client versions and both Java versions in two runs: the oldest client on 17, the latest on 25. */
  static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> matrix() {
    List<Path> homes = AgentProcesses.javaHomes();
    return java.util.stream.Stream.of(
        org.junit.jupiter.params.provider.Arguments.of(System.getProperty("fencing.it.kafka.clients.oldest"), homes.get(0)),
        org.junit.jupiter.params.provider.Arguments.of(System.getProperty("fencing.it.kafka.clients.latest"),
            homes.get(homes.size() - 1)));
  }

  @ParameterizedTest(name = "kafka-clients {0} on {1}")
  @MethodSource("matrix")
  void eachRecordsWritesCarryItsTokenAndAStaleRecordsWriteIsRejected(String version, Path javaHome) throws Exception {
    String db = "xhop_" + version.replace('.', '_') + "_" + AgentProcesses.javaVersion(javaHome);
    String admin = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
    try (Connection c = DriverManager.getConnection(admin); Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + db);
    }
    String url = pg.jdbcUrl(db) + (pg.jdbcUrl(db).contains("?") ? "&" : "?") + "user=" + pg.user();
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE ledger (id SERIAL PRIMARY KEY, note TEXT NOT NULL)");
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("ledger"), "orders", false, false));
    }
    String topic = "events-" + db;
    broker.createTopic(topic, 1);
    // Sent by a plain producer (no agent): the header a holder's agent would have set, one record in the older form
    // of three headers (still read), one carrying both forms (malformed: nothing adopted) and one without.
    send(topic, "first", "orders", "5", "fencing");
    send(topic, "second", "orders", "7", "older");
    send(topic, "stale", "orders", "5", "fencing");
    send(topic, "untagged", null, null, null);
    send(topic, "both-forms", "orders", "9", "both");
    send(topic, "third", "orders", "9", "fencing");

    String classpath = String.join(File.pathSeparator, AgentProcesses.appClasspath(),
        KafkaProducerIT.clientsJar(version).toString(), System.getProperty("fencing.it.slf4j.jar"),
        System.getProperty("fencing.it.postgresql.jar"));
    int port = Ports.freePort();
    try (AgentJvm consumer = AgentJvm.builder().javaHome(javaHome)
        .name("consumer-" + version + "-java" + AgentProcesses.javaVersion(javaHome))
        .agentArgs("lease.enabled=false,http.port=" + port).classpath(classpath)
        .mainClass(KafkaConsumerApp.class.getName()).args(broker.bootstrapServers(), topic, url).start()) {
      consumer.awaitOutput("CONSUMED third", Duration.ofSeconds(60));
      List<String> consumed = consumer.output().lines().filter(l -> l.startsWith("CONSUMED ")).toList();
      assertThat(consumed).containsExactly("CONSUMED first OK", "CONSUMED second OK", "CONSUMED stale SQLSTATE FN001",
          "CONSUMED untagged SQLSTATE FN002", "CONSUMED both-forms SQLSTATE FN002", "CONSUMED third OK");
      assertThat(JdbcTakeoverIT.query(url, "SELECT string_agg(note, ',' ORDER BY id) FROM ledger"))
          .isEqualTo("first,second,third");
      assertThat(JdbcTakeoverIT.query(url, "SELECT token FROM fencing_fence WHERE lock_name = 'orders'")).isEqualTo("9");
      assertThat(Http.get("http://127.0.0.1:" + port + "/metrics"))
          .contains("fencing_rejections_total{channel=\"jdbc\",lock=\"none\",reason=\"stale_token\"} 1.0")
          .contains("fencing_rejections_total{channel=\"jdbc\",lock=\"none\",reason=\"missing_token\"} 2.0");
    }
  }

  /** {@code form}: "fencing" (one header, as the agent writes), "older" (three headers), "both", null (none). */
  private static void send(String topic, String value, String lock, String token, String form) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", broker.bootstrapServers());
    p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
    p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      ProducerRecord<String, String> r = new ProducerRecord<>(topic, value);
      if ("fencing".equals(form) || "both".equals(form)) {
        r.headers().add("fencing", (token + ";" + lock).getBytes(StandardCharsets.US_ASCII));
      }
      if ("older".equals(form) || "both".equals(form)) {
        r.headers().add("fencing-lock", lock.getBytes(StandardCharsets.UTF_8));
        r.headers().add("fencing-token", token.getBytes(StandardCharsets.US_ASCII));
      }
      producer.send(r).get();
    }
  }
}
