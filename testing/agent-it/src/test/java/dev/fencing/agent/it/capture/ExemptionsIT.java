package dev.fencing.agent.it.capture;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.kafka.KafkaProducerIT;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.apps.ExemptionsApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.Ports;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * fencing.exempt.*: a standby (another JVM holds the lock) whose writes to exempt destinations (a JDBC URL, an HTTP
 * host:port, a Kafka topic glob) go through untagged while the same kinds of write elsewhere are blocked, and whose
 * Flyway migration (an exempt caller, by default) runs to the end on the database whose other writes it blocks.
 */
class ExemptionsIT {
  // One broker, etcd and PostgreSQL for every case: each case has its own lock, topics and databases.
  private static KafkaBroker broker;
  private static EtcdCluster etcd;
  private static PostgresServer pg;

  @BeforeAll
  static void startServers() {
    broker = KafkaBroker.start();
    etcd = EtcdCluster.single();
    pg = PostgresServer.start();
  }

  @AfterAll
  static void stopServers() {
    for (AutoCloseable server : new AutoCloseable[] {pg, etcd, broker}) {
      try {
        if (server != null) {
          server.close();
        }
      } catch (Exception e) {
        throw new IllegalStateException("cannot stop " + server, e);
      }
    }
  }

  /** Creates database {@code name} on the shared server; returns its JDBC URL. */
  private static String database(String name) throws Exception {
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    return pg.jdbcUrl(name);
  }

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /**
   * Flyway on a standby is the agent's logic and Flyway's, the same on every Java: this build's (the exempt
   * destinations case runs on both).
   */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  /** A receiver that records each request's method and whether it carried a Fencing-Token header. */
  private static HttpServer receiver(List<String> seen) throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", Ports.freePort()), 0);
    server.createContext("/", exchange -> {
      seen.add(exchange.getRequestMethod() + " token=" + exchange.getRequestHeaders().getFirst("Fencing-Token"));
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    server.start();
    return server;
  }

  /** A standby JVM: another JVM holds {@code lock}; the app runs with {@code exemptArgs} and waits in STANDBY. */
  private record Standby(AgentProcesses.Agent holder, AgentJvm app, AppStdin stdin, int port) implements AutoCloseable {
    static Standby start(Path javaHome, EtcdCluster etcd, String lock, String exemptArgs) throws Exception {
      AgentProcesses.Agent holder = AgentProcesses.start(javaHome, "holder", "lock=" + lock + ",etcd.endpoints="
          + etcd.endpoints());
      try {
        Http.awaitStatus(holder.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
        int port = Ports.freePort();
        String classpath = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty(
            "fencing.it.postgresql.jar") + File.pathSeparator + KafkaProducerIT.clientsJar(System.getProperty(
            "fencing.it.kafka.clients.latest")) + File.pathSeparator + System.getProperty("fencing.it.slf4j.jar")
            + File.pathSeparator + AgentProcesses.libraries("flyway-");
        AgentJvm app = AgentJvm.builder().javaHome(javaHome).name(lock)
            .agentArgs("lock=" + lock + ",http.port=" + port + ",etcd.endpoints=" + etcd.endpoints() + exemptArgs)
            .classpath(classpath).mainClass(ExemptionsApp.class.getName()).args(broker.bootstrapServers()).start();
        try {
          app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
          Http.awaitStatus(port, "\"state\":\"STANDBY\"", Duration.ofSeconds(15));
          return new Standby(holder, app, AppStdin.marked(app, "> "), port);
        } catch (RuntimeException | Error e) {
          app.close();
          throw e;
        }
      } catch (Exception | Error e) {
        holder.close();
        throw e;
      }
    }

    String run(String command) throws Exception {
      return stdin.run(command);
    }

    String metrics() {
      return Http.get("http://127.0.0.1:" + port + "/metrics");
    }

    @Override
    public void close() {
      try {
        app.close();
      } finally {
        holder.close();
      }
    }
  }

  @ParameterizedTest(name = "on {0}")
  @MethodSource("javaHomes")
  void aStandbysWritesToExemptDestinationsGoThroughUntaggedWhileTheSameKindsOfWriteElsewhereAreBlocked(Path javaHome)
      throws Exception {
    String run = "java" + AgentProcesses.javaVersion(javaHome);
    String heartbeats = "heartbeats-" + run;
    String orders = "orders-" + run;
    broker.createTopic(heartbeats, 1);
    broker.createTopic(orders, 1);
    List<String> exemptSeen = new CopyOnWriteArrayList<>();
    List<String> otherSeen = new CopyOnWriteArrayList<>();
    HttpServer exemptServer = receiver(exemptSeen);
    HttpServer otherServer = receiver(otherSeen);
    try {
      String appUrl = database("app_" + run);
      String telemetryUrl = database("telemetry_" + run);
      try (Connection c = DriverManager.getConnection(telemetryUrl); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE sample (v INT)");
      }
      String lock = "exempt-" + run;
      String telemetryPrefix = telemetryUrl.substring(0, telemetryUrl.indexOf('?'));
      try (Standby app = Standby.start(javaHome, etcd, lock, ",exempt.jdbc=" + telemetryPrefix
          + ",exempt.http=127.0.0.1:" + exemptServer.getAddress().getPort() + ",exempt.kafka=heartbeats-*")) {
        // JDBC: the exempt database takes the write (and a transaction's commit); the other one is refused.
        assertThat(app.run("SQL " + telemetryUrl + " INSERT INTO sample VALUES (1)")).isEqualTo("OK 1");
        assertThat(app.run("TXN " + telemetryUrl + " INSERT INTO sample VALUES (2);INSERT INTO sample VALUES (3)"))
            .isEqualTo("OK committed");
        assertThat(app.run("SQL " + appUrl + " CREATE TABLE audit (note TEXT)")).startsWith("ERR FN003");

        // HTTP: the exempt host:port gets the POST untagged; another destination's is blocked before it leaves.
        assertThat(app.run("HTTP POST http://127.0.0.1:" + exemptServer.getAddress().getPort() + "/v1/metrics"))
            .isEqualTo("OK 200");
        assertThat(app.run("HTTP POST http://127.0.0.1:" + otherServer.getAddress().getPort() + "/orders"))
            .startsWith("ERR").contains("Fencing Agent blocked");

        // Kafka: a record to an exempt topic is sent untagged; one to another topic fails through send().
        assertThat(app.run("KAFKA " + heartbeats + " alive")).isEqualTo("OK sent");
        assertThat(app.run("KAFKA " + orders + " order-1")).startsWith("ERR").contains("Fencing Agent blocked");

        String metrics = app.metrics();
        String exempt = ",fenced=\"false\",lock=\"" + lock + "\",outcome=\"exempt\"} ";
        String blocked = ",fenced=\"false\",lock=\"" + lock + "\",outcome=\"blocked\"} ";
        assertThat(metrics)
            .contains("fencing_side_effects_total{channel=\"jdbc\"" + exempt + "3.0")
            .contains("fencing_side_effects_total{channel=\"http\"" + exempt + "1.0")
            .contains("fencing_side_effects_total{channel=\"kafka\"" + exempt + "1.0")
            .contains("fencing_side_effects_total{channel=\"jdbc\"" + blocked + "1.0")
            .contains("fencing_side_effects_total{channel=\"http\"" + blocked + "1.0")
            .contains("fencing_side_effects_total{channel=\"kafka\"" + blocked + "1.0");
      }
      assertThat(query(telemetryUrl, "SELECT count(*) FROM sample")).isEqualTo("3");
      assertThat(query(appUrl, "SELECT count(*) FROM pg_tables WHERE tablename = 'audit'")).isEqualTo("0");
      assertThat(exemptSeen).containsExactly("POST token=null");
      assertThat(otherSeen).isEmpty();
      List<ConsumerRecord<String, String>> beats = readAll(heartbeats);
      assertThat(beats).extracting(ConsumerRecord::value).containsExactly("alive");
      assertThat(beats.get(0).headers().toArray()).isEmpty();
      assertThat(readAll(orders)).isEmpty();
    } finally {
      exemptServer.stop(0);
      otherServer.stop(0);
    }
  }

  /** fencing.exempt.callers by default: Flyway migrates on a standby, the standby's own writes stay blocked. */
  @ParameterizedTest(name = "on {0}")
  @MethodSource("currentJava")
  void aFlywayMigrationOnAStandbyCompletesWhileTheStandbysOwnWritesToTheSameDatabaseAreBlocked(Path javaHome,
      @TempDir Path dir) throws Exception {
    String run = "java" + AgentProcesses.javaVersion(javaHome);
    Path migrations = Files.createDirectories(dir.resolve("db"));
    Files.writeString(migrations.resolve("V1__account.sql"), "CREATE TABLE account (id INT PRIMARY KEY, balance INT);");
    Files.writeString(migrations.resolve("V2__seed.sql"), "INSERT INTO account VALUES (1, 100), (2, 0);");
    String appUrl = database("flyway_" + run);
    String lock = "flyway-" + run;
    try (Standby app = Standby.start(javaHome, etcd, lock, "")) {
      assertThat(app.run("FLYWAY " + appUrl + " " + migrations)).isEqualTo("OK 2");
      assertThat(app.run("SQL " + appUrl + " UPDATE account SET balance = 0 WHERE id = 1")).startsWith("ERR FN003");

      String metrics = app.metrics();
      // Flyway's writes that would have been blocked (its history table, the DDL, the rows, the commits).
      assertThat(exemptCount(metrics, "jdbc")).isGreaterThanOrEqualTo(4);
      assertThat(metrics).contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"" + lock
          + "\",outcome=\"blocked\"} 1.0");
    }
    assertThat(query(appUrl, "SELECT count(*) FROM flyway_schema_history WHERE success")).isEqualTo("2");
    assertThat(query(appUrl, "SELECT balance FROM account WHERE id = 1")).isEqualTo("100");
  }

  private static double exemptCount(String metrics, String channel) {
    String prefix = "fencing_side_effects_total{channel=\"" + channel + "\",fenced=\"false\",";
    return metrics.lines().filter(l -> l.startsWith(prefix) && l.contains("outcome=\"exempt\""))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
  }

  private static String query(String url, String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  private static List<ConsumerRecord<String, String>> readAll(String topic) {
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of("bootstrap.servers",
        broker.bootstrapServers(), "enable.auto.commit", "false"), new StringDeserializer(), new StringDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (consumer.position(tp) < end && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
      return records;
    }
  }
}
