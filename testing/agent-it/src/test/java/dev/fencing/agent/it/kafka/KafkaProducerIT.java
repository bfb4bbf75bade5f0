package dev.fencing.agent.it.kafka;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.apps.KafkaApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.Ports;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The KafkaProducer hook against a real broker: records carry the pair exactly once while the lease is held; after
 * the lease is lost, records to unfenced topics fail through the producer's own error path and never reach the
 * broker, records to fenced topics arrive with the last token, and transactions with a blocked record cannot commit.
 * kafka-clients versions: the one the hook is built against (Java 17) and the newest (Java 25).
 */
public class KafkaProducerIT {
  private static KafkaBroker broker;

  @BeforeAll
  static void startBroker() {
    broker = KafkaBroker.start();
  }

  @AfterAll
  static void stopBroker() {
    if (broker != null) {
      broker.close();
    }
  }

  /**
   * The oldest kafka-clients on the oldest Java and the latest on the newest: each client line and each Java once, for
   * cases that take about 10 s each and whose subject (what the agent decides for a record, buffered or not) is the
   * agent's own, the same on every Java; that the hook is woven into each client line shows on both.
   */
  public static Stream<Arguments> eachClientAndJavaOnce() {
    return Stream.of(
        Arguments.of(System.getProperty("fencing.it.kafka.clients.oldest"), AgentProcesses.javaHomes().get(0)),
        Arguments.of(System.getProperty("fencing.it.kafka.clients.latest"), AgentProcesses.newestJava().get(0)));
  }

  /** The kafka-clients jar of {@code version}, as testing/library-versions resolved it. */
  public static Path clientsJar(String version) {
    Path jar = AgentProcesses.libraryJars("kafka-clients", version).resolve("kafka-clients-" + version + ".jar");
    if (!Files.isReadable(jar)) {
      throw new IllegalStateException(jar + " is missing: build testing/library-versions first (mvn install)");
    }
    return jar;
  }

  /**
   * KafkaApp on kafka-clients {@code version} with the agent holding lock {@code orders} (TTL 3 s) on {@code etcd},
   * topics {@code fenced-*} fenced, /status on {@code port}; started.
   */
  private static AgentJvm ordersApp(String version, Path javaHome, String name, EtcdCluster etcd, int port) {
    String classpath = AgentProcesses.appClasspath() + File.pathSeparator + clientsJar(version) + File.pathSeparator
        + System.getProperty("fencing.it.slf4j.jar");
    AgentJvm app = AgentJvm.builder().javaHome(javaHome).name(name)
        .agentArgs("lock=orders,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port
            + ",fenced.kafka=fenced-*,etcd.endpoints=" + etcd.endpoints())
        .classpath(classpath).mainClass(KafkaApp.class.getName()).args(broker.bootstrapServers()).start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    return app;
  }

  /** With fencing.signing.key-file, each record also carries fencing-signature, which verifies for (lock, token). */
  @ParameterizedTest(name = "kafka-clients {0} on {1}")
  @MethodSource("eachClientAndJavaOnce")
  void withASigningKeyRecordsCarryAVerifyingSignatureOnce(String version, Path javaHome, @TempDir Path dir)
      throws Exception {
    String run = version.replace('.', '_') + "-java" + AgentProcesses.javaVersion(javaHome);
    String topic = "signed-" + run;
    broker.createTopic(topic, 1);
    byte[] raw = new byte[32];
    new java.security.SecureRandom().nextBytes(raw);
    Path keyFile = Files.writeString(dir.resolve("fencing.key"), java.util.Base64.getEncoder().encodeToString(raw));
    dev.fencing.protocol.TokenSignature key = dev.fencing.protocol.TokenSignature.load(keyFile);
    int port = Ports.freePort();
    String classpath = AgentProcesses.appClasspath() + File.pathSeparator + clientsJar(version) + File.pathSeparator
        + System.getProperty("fencing.it.slf4j.jar");
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome).name("kafka-signed-" + run)
            .agentArgs("lock=orders,http.port=" + port + ",signing.key-file=" + keyFile + ",etcd.endpoints="
                + etcd.endpoints())
            .classpath(classpath).mainClass(KafkaApp.class.getName()).args(broker.bootstrapServers()).start()) {
      app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
      AppStdin stdin = AppStdin.marked(app, "> ");
      long token = Long.parseLong(Http.jsonField(
          Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token"));
      assertThat(stdin.run("SEND " + topic + " plain plain")).startsWith("OK 0 ");
      assertThat(stdin.run("SEND " + topic + " resend resend")).startsWith("OK ");
      List<ConsumerRecord<String, String>> records = readAll(topic, "read_uncommitted");
      assertThat(records).isNotEmpty();
      String signature = key.sign("orders", token);
      for (ConsumerRecord<String, String> r : records) {
        assertThat(headers(r)).as("record %s", r.offset()).containsOnlyOnce("fencing-signature=" + signature)
            .filteredOn(h -> h.startsWith("fencing=")).singleElement().asString()
            .startsWith("fencing=" + token + ";orders;");
      }
    }
  }

  /**
   * A transactional producer paused between {@code send().get()} and {@code commitTransaction()} past its lease: its
   * records toward an unfenced topic reached the broker under the lease, but only the commit makes them visible to
   * {@code read_committed} consumers. After the deadline the commit is refused with the block's KafkaException (the
   * transaction turns abortable, and the application aborts it); a transaction with records toward fenced topics only
   * commits (their consumers' fence judges the token).
   */
  @ParameterizedTest(name = "kafka-clients {0} on {1}")
  @MethodSource("eachClientAndJavaOnce")
  void aTransactionWhoseLeaseEndedBeforeItsCommitDoesNotCommitRecordsTowardAnUnfencedTopic(String version,
      Path javaHome) throws Exception {
    String run = version.replace('.', '_') + "-java" + AgentProcesses.javaVersion(javaHome);
    String open = "txn-open-" + run;
    String fenced = "fenced-txn-" + run;
    broker.createTopic(open, 1);
    broker.createTopic(fenced, 1);
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = ordersApp(version, javaHome, "kafka-txn-" + run, etcd, port)) {
      AppStdin stdin = AppStdin.marked(app, "> ");
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)),
          "token");
      assertThat(stdin.run("TXN-OPEN " + open + ":held")).isEqualTo("TXN-OPEN sends=[OK]");
      assertThat(stdin.run("TXN-COMMIT")).as("while held").isEqualTo("TXN COMMITTED");

      assertThat(stdin.run("TXN-OPEN " + open + ":late " + fenced + ":late")).isEqualTo("TXN-OPEN sends=[OK, OK]");
      app.suspend(); // paused between send().get() and commitTransaction(), past the lease
      Thread.sleep(4500);
      app.resume();
      // Expired, or (once the agent campaigned again) held under a later grant: either way not this transaction's.
      assertThat(stdin.run("TXN-COMMIT")).startsWith("TXN COMMIT-FAILED org.apache.kafka.common.KafkaException:"
          + " Fencing Agent blocked a kafka side effect: lock 'orders', token " + token + ": the lease ")
          .endsWith(" (cause dev.fencing.agent.bootstrap.FencingBlockedException) ABORTED");
      assertThat(readAll(open, "read_committed")).extracting(ConsumerRecord::key).containsExactly("held");
      assertThat(readAll(fenced, "read_committed")).as("aborted with it").isEmpty();

      // Records toward a fenced topic only: the commit goes on (the consumer's fence judges their token).
      assertThat(stdin.run("TXN-OPEN " + fenced + ":stale")).isEqualTo("TXN-OPEN sends=[OK]");
      assertThat(stdin.run("TXN-COMMIT")).isEqualTo("TXN COMMITTED");
      assertThat(readAll(fenced, "read_committed")).extracting(ConsumerRecord::key).containsExactly("stale");
    }
  }

  @ParameterizedTest(name = "kafka-clients {0} on {1}")
  @MethodSource("eachClientAndJavaOnce")
  void recordsCarryThePairOnceAndAreBlockedAfterExpiryUnlessTheTopicIsFenced(String version, Path javaHome)
      throws Exception {
    String run = version.replace('.', '_') + "-java" + AgentProcesses.javaVersion(javaHome);
    String open = "open-" + run;
    String fenced = "fenced-" + run;
    String txn = "txn-" + run;
    for (String topic : List.of(open, fenced, txn)) {
      broker.createTopic(topic, 1);
    }
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = ordersApp(version, javaHome, "kafka-" + run, etcd, port)) {
      AppStdin stdin = AppStdin.marked(app, "> ");
      String status = Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      String token = Http.jsonField(status, "token");
      // The grant id carried beside the token is the lease id /status reports (hex).
      String grant = Http.jsonField(status, "leaseId").replace("\"", "");
      assertThat(grant).matches("[0-9a-f]{1,16}");

      // Holding: every record carries one header with token, lock and grant, whatever headers it came with (also
      // another holder's, in either form); the app's own headers stay.
      assertThat(stdin.run("SEND " + open + " plain plain")).startsWith("OK 0 callerHeaders=[x-app, fencing]");
      // Read-only headers: the agent sends a copy; the caller's record is left as it was.
      assertThat(stdin.run("SEND " + open + " readonly readonly")).isEqualTo("OK 1 callerHeaders=[x-app]");
      assertThat(stdin.run("SEND " + open + " preexisting preexisting")).startsWith("OK 2 ");
      assertThat(stdin.run("SEND " + open + " resend resend")).startsWith("OK 4 ");
      assertThat(stdin.run("SENDCB " + open + " callback")).isEqualTo("CB partition=0 offset=5 error=none FUTURE OK 5");
      assertThat(stdin.run("TXN abort-on-error " + txn + ":t1 " + txn + ":t2")).isEqualTo("TXN sends=[OK, OK] COMMITTED");

      List<ConsumerRecord<String, String>> sent = readAll(open, "read_uncommitted");
      assertThat(sent).extracting(ConsumerRecord::key)
          .containsExactly("plain", "readonly", "preexisting", "resend", "resend", "callback");
      List<ConsumerRecord<String, String>> committed = readAll(txn, "read_committed");
      assertThat(committed).extracting(ConsumerRecord::key).containsExactly("t1", "t2");
      for (ConsumerRecord<String, String> r : concat(sent, committed)) {
        assertThat(headers(r)).as("headers of %s", r.key())
            .containsExactly("x-app=" + r.key(), "fencing=" + token + ";orders;" + grant);
      }

      // Lease lost: etcd gone, local deadline passed.
      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      String blocked = "org.apache.kafka.common.KafkaException: Fencing Agent blocked a kafka side effect: lock "
          + "'orders', token " + token + ": the lease expired (local deadline passed) (cause "
          + "dev.fencing.agent.bootstrap.FencingBlockedException)";

      // Unfenced topic: the future and the callback fail, nothing reaches the broker.
      assertThat(stdin.run("SEND " + open + " late plain")).isEqualTo("ERR " + blocked);
      assertThat(stdin.run("SENDCB " + open + " late-callback"))
          .isEqualTo("CB partition=-1 offset=-1 error=" + blocked + " FUTURE ERR " + blocked);
      assertThat(readAll(open, "read_uncommitted")).extracting(ConsumerRecord::key)
          .containsExactly("plain", "readonly", "preexisting", "resend", "resend", "callback");

      // Fenced topic: sent with the last token, for the consumer's fence to reject.
      assertThat(stdin.run("SEND " + fenced + " stale plain")).startsWith("OK 0 ");
      // A transaction with a blocked record: the app aborts, or its commit fails and it aborts.
      assertThat(stdin.run("TXN abort-on-error " + fenced + ":tx-abort " + open + ":tx-abort"))
          .isEqualTo("TXN sends=[OK, ERR " + blocked + "] ABORTED");
      assertThat(stdin.run("TXN commit-anyway " + fenced + ":tx-commit " + open + ":tx-commit"))
          .startsWith("TXN sends=[OK, ERR " + blocked + "] COMMIT-FAILED org.apache.kafka.common.")
          .endsWith(" ABORTED");

      List<ConsumerRecord<String, String>> visible = readAll(fenced, "read_committed");
      assertThat(visible).extracting(ConsumerRecord::key).containsExactly("stale");
      assertThat(headers(visible.get(0))).containsExactly("x-app=stale", "fencing=" + token + ";orders;" + grant);
      // The aborted records did reach the broker (with the last token), but never became visible.
      assertThat(readAll(fenced, "read_uncommitted")).extracting(ConsumerRecord::key)
          .containsExactly("stale", "tx-abort", "tx-commit");
      assertThat(readAll(open, "read_uncommitted")).hasSize(6);

      String metrics = Http.get("http://127.0.0.1:" + port + "/metrics");
      assertThat(metrics)
          // plain, readonly, preexisting, resend (2 sends), callback, 2 in the transaction
          .contains("fencing_side_effects_total{channel=\"kafka\",fenced=\"false\",lock=\"orders\",outcome=\"tagged\"} 8.0")
          .contains("fencing_side_effects_total{channel=\"kafka\",fenced=\"false\",lock=\"orders\",outcome=\"blocked\"} 4.0")
          .contains("fencing_side_effects_total{channel=\"kafka\",fenced=\"true\",lock=\"orders\",outcome=\"tagged\"} 3.0")
          .contains("fencing_side_effects_total{channel=\"kafka\",fenced=\"true\",lock=\"orders\",outcome=\"blocked\"} 0.0");
    }
  }

  private static List<ConsumerRecord<String, String>> concat(List<ConsumerRecord<String, String>> a,
      List<ConsumerRecord<String, String>> b) {
    List<ConsumerRecord<String, String>> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  /** The record's headers in order, as key=value (UTF-8). */
  public static List<String> headers(ConsumerRecord<String, String> r) {
    return StreamSupport.stream(r.headers().spliterator(), false)
        .map((Header h) -> h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8)).toList();
  }

  /** Every record of partition 0 of {@code topic} up to its end (for read_committed: the last stable offset). */
  public static List<ConsumerRecord<String, String>> readAll(String topic, String isolation) {
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of("bootstrap.servers",
        broker.bootstrapServers(), "isolation.level", isolation, "enable.auto.commit", "false"),
        new StringDeserializer(), new StringDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (consumer.position(tp) < end) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("could not read " + topic + " up to offset " + end + "; got " + records);
        }
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
      return records;
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
