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
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Records buffered in the producer while the broker cannot be reached: the decision taken at send() does not let
 * them leave after the local deadline. The broker is frozen (SIGSTOP) with one request in flight, records pile up in
 * the producer, the lease runs out, the broker comes back: records toward an unfenced topic fail with the block
 * exception and never reach it; records toward a fenced topic are delivered with the last token, for the consumer's
 * fence to judge. Also when the same JVM holds a new grant by the time the broker is back: records tagged under the
 * old grant still fail. kafka-clients: the oldest line the hook supports (Java 17) and the newest (Java 25).
 */
class KafkaBufferedSendIT {
  private static final int LATE = 20;
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

  @ParameterizedTest(name = "kafka-clients {0} on {1}")
  @MethodSource("dev.fencing.agent.it.kafka.KafkaProducerIT#eachClientAndJavaOnce")
  void bufferedRecordsToAnUnfencedTopicNeverLeaveAfterTheDeadline(String version, Path javaHome) throws Exception {
    String run = version.replace('.', '_') + "-java" + AgentProcesses.javaVersion(javaHome);
    String open = "buffered-open-" + run;
    String fenced = "buffered-fenced-" + run;
    broker.createTopic(open, 1);
    broker.createTopic(fenced, 1);
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); AgentJvm app = start(version, javaHome, run, etcd, port)) {
      AppStdin stdin = AppStdin.marked(app, "> ");
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      warmUp(stdin, open, fenced);

      broker.suspend();
      try {
        bufferWhileFrozen(stdin, open, fenced);
        for (EtcdNode n : etcd.nodes()) {
          n.kill();
        }
        Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      } finally {
        broker.resume();
      }

      assertDelivery(stdin, open, fenced, token, "the lease expired \\(local deadline passed\\)", port);
    }
  }

  @ParameterizedTest(name = "kafka-clients {0} on {1}")
  @MethodSource("dev.fencing.agent.it.kafka.KafkaProducerIT#eachClientAndJavaOnce")
  void bufferedRecordsOfAnEarlierGrantNeverLeaveUnderTheNextOne(String version, Path javaHome) throws Exception {
    String run = version.replace('.', '_') + "-java" + AgentProcesses.javaVersion(javaHome);
    String open = "regrant-open-" + run;
    String fenced = "regrant-fenced-" + run;
    broker.createTopic(open, 1);
    broker.createTopic(fenced, 1);
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); AgentJvm app = start(version, javaHome, run, etcd, port)) {
      AppStdin stdin = AppStdin.marked(app, "> ");
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      warmUp(stdin, open, fenced);

      broker.suspend();
      String next;
      try {
        bufferWhileFrozen(stdin, open, fenced);
        for (EtcdNode n : etcd.nodes()) {
          n.kill();
        }
        Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
        for (EtcdNode n : etcd.nodes()) {
          n.start();
        }
        // The same JVM wins the lock again: a new grant, a higher token.
        String status = Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(30));
        next = Http.jsonField(status, "token");
        assertThat(Long.parseLong(next)).isGreaterThan(Long.parseLong(token));
      } finally {
        broker.resume();
      }

      // Failed as soon as the producer's I/O thread looked while the lease was expired, or, if it slept through
      // that, when it looked again under the new grant: either way with the old token and never sent.
      assertDelivery(stdin, open, fenced, token,
          "(the lease expired \\(local deadline passed\\)|the lease was lost)", port);
      // Under the new grant the topic takes records again.
      assertThat(stdin.run("SEND " + open + " after plain")).startsWith("OK 2 ");
    }
  }

  /**
   * A batch sent before the deadline whose request timed out is retried after it: the retry never leaves, and the
   * record fails with the block exception. Without idempotence, so that a retry that left would show as a second
   * copy; the first attempt, written to the frozen broker while the lease was held, may land (once).
   */
  @ParameterizedTest(name = "kafka-clients {0} on {1}")
  @MethodSource("dev.fencing.agent.it.kafka.KafkaProducerIT#eachClientAndJavaOnce")
  void aRetryAfterTheDeadlineOfABatchSentBeforeItNeverLeaves(String version, Path javaHome) throws Exception {
    String run = version.replace('.', '_') + "-java" + AgentProcesses.javaVersion(javaHome);
    String open = "retry-open-" + run;
    broker.createTopic(open, 1);
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = start(version, javaHome, run, etcd, port, "enable.idempotence=false", "acks=1",
            "max.in.flight.requests.per.connection=1", "request.timeout.ms=1500", "delivery.timeout.ms=120000",
            "retry.backoff.ms=100")) {
      AppStdin stdin = AppStdin.marked(app, "> ");
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      assertThat(stdin.run("SEND " + open + " warm plain")).startsWith("OK 0 ");

      broker.suspend();
      try {
        assertThat(stdin.run("BURST " + open + " sent 1")).isEqualTo("SENT 1");
        Thread.sleep(2_500); // its request timed out: the batch waits for a retry
        for (EtcdNode n : etcd.nodes()) {
          n.kill();
        }
        Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      } finally {
        broker.resume();
      }
      String outcome = stdin.run("OUTCOMES sent");
      System.out.println("retried record: " + outcome);
      assertThat(outcome).isEqualTo("OUTCOMES ok=[] err=[sent-0: org.apache.kafka.common.KafkaException: Fencing "
          + "Agent blocked a kafka side effect: lock 'orders', token " + token + ": the lease expired (local "
          + "deadline passed) (cause dev.fencing.agent.bootstrap.FencingBlockedException)]");
      Thread.sleep(1_000);
      assertThat(readAll(open)).extracting(ConsumerRecord::key).as("the first attempt at most, never the retry")
          .containsAnyOf("warm").doesNotHaveDuplicates();
      String metrics = Http.get("http://127.0.0.1:" + port + "/metrics");
      assertThat(metrics).contains(
          "fencing_side_effects_total{channel=\"kafka\",fenced=\"false\",lock=\"orders\",outcome=\"blocked\"} 1.0");
    }
  }

  /**
   * Three grants valid at once in one JVM (the JVM-wide lock and two sections' locks), one producer: records of each
   * lock buffered toward its own unfenced topic while the broker is frozen; one section's lease is revoked. Its records
   * never leave, whatever the order of the sends; the other locks' records are delivered. Each batch is judged by the
   * grants its records were tagged under, not by the two grants the JVM tagged with last.
   */
  @ParameterizedTest(name = "kafka-clients {0} on {1}")
  @MethodSource("latestClientOnNewestJava")
  void bufferedRecordsAreJudgedByTheLockTheyWereTaggedWith(String version, Path javaHome) throws Exception {
    String run = version.replace('.', '_') + "-java" + AgentProcesses.javaVersion(javaHome);
    String topicA = "locks-a-" + run;
    String topicB = "locks-b-" + run;
    String topicJvm = "locks-jvm-" + run;
    for (String t : List.of(topicA, topicB, topicJvm)) {
      broker.createTopic(t, 1);
    }
    int port = Ports.freePort();
    String app = dev.fencing.it.kafka.KafkaSections.class.getName();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm jvm = startWithAgentArgs(version, javaHome, run, etcd, port,
            ",sections=" + app + "#burstInA@ledger-a," + app + "#burstInB@ledger-b",
            "max.in.flight.requests.per.connection=1", "request.timeout.ms=90000", "delivery.timeout.ms=120000")) {
      AppStdin stdin = AppStdin.marked(jvm, "> ");
      String status = Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      for (String lock : List.of("ledger-a", "ledger-b")) {
        status = Http.awaitStatus(port, "\"lock\":\"" + lock + "\",\"scope\":\"sections\",\"state\":\"HOLDING\"",
            Duration.ofSeconds(15));
      }
      String leaseA = lockField(status, "ledger-a", "leaseId");
      String tokenA = lockField(status, "ledger-a", "token");
      for (String t : List.of(topicA, topicB, topicJvm)) {
        assertThat(stdin.run("SEND " + t + " warm plain")).startsWith("OK 0 ");
      }

      broker.suspend();
      try {
        assertThat(stdin.run("BURST " + topicJvm + " plug 1")).isEqualTo("SENT 1"); // in flight to the frozen broker
        assertThat(stdin.run("DRAINED")).startsWith("DRAINED ");
        // ledger-a first, then ledger-b, then the JVM-wide lock, each in its own milliseconds.
        assertThat(stdin.run("BURST-A " + topicA + " a 5")).isEqualTo("SENT 5");
        Thread.sleep(50);
        assertThat(stdin.run("BURST-B " + topicB + " b 5")).isEqualTo("SENT 5");
        Thread.sleep(50);
        assertThat(stdin.run("BURST " + topicJvm + " j 5")).isEqualTo("SENT 5");
        etcd.etcdctl("lease", "revoke", leaseA); // ledger-a's grant ends; ledger-b's and the JVM-wide lock's hold
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (lockField(Http.get("http://127.0.0.1:" + port + "/status"), "ledger-a", "lastLossReason")
            .equals("null")) {
          assertThat(System.nanoTime()).as("ledger-a lost its lease").isLessThan(deadline);
          Thread.sleep(50);
        }
        Thread.sleep(500);
      } finally {
        broker.resume();
      }

      String outcomes = stdin.run("OUTCOMES a");
      System.out.println("ledger-a's buffered records: " + outcomes);
      assertThat(outcomes).startsWith("OUTCOMES ok=[] err=[a-0: org.apache.kafka.common.KafkaException: Fencing Agent "
          + "blocked a kafka side effect: lock 'ledger-a', token " + tokenA + ": ");
      assertThat(stdin.run("OUTCOMES b")).isEqualTo("OUTCOMES ok=[b-0, b-1, b-2, b-3, b-4] err=[]");
      assertThat(stdin.run("OUTCOMES j")).isEqualTo("OUTCOMES ok=[j-0, j-1, j-2, j-3, j-4] err=[]");
      assertThat(readAll(topicA)).extracting(ConsumerRecord::key).containsExactly("warm");
      assertThat(readAll(topicB)).extracting(ConsumerRecord::key).containsExactly("warm", "b-0", "b-1", "b-2", "b-3",
          "b-4");
    }
  }

  static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> latestClientOnNewestJava() {
    return java.util.stream.Stream.of(org.junit.jupiter.params.provider.Arguments.of(
        System.getProperty("fencing.it.kafka.clients.latest"), AgentProcesses.newestJava().get(0)));
  }

  /** {@code field} of lock {@code lock}'s entry in /status's {@code locks} array. */
  private static String lockField(String status, String lock, String field) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\{\"lock\":\"" + java.util.regex.Pattern.quote(lock)
        + "\"[^{}]*?\"" + field + "\":\"?([^\",}]+)").matcher(status);
    if (!m.find()) {
      throw new AssertionError("no " + field + " of lock " + lock + " in " + status);
    }
    return m.group(1);
  }

  private static AgentJvm start(String version, Path javaHome, String run, EtcdCluster etcd, int port) {
    // One request in flight per connection: while the broker is frozen, the first record's request is written
    // and every later record waits in the producer. The frozen request must not time out meanwhile.
    return start(version, javaHome, run, etcd, port, "max.in.flight.requests.per.connection=1",
        "request.timeout.ms=90000", "delivery.timeout.ms=120000");
  }

  private static AgentJvm start(String version, Path javaHome, String run, EtcdCluster etcd, int port,
      String... producerSettings) {
    return startWithAgentArgs(version, javaHome, run, etcd, port, "", producerSettings);
  }

  /** {@code moreAgentArgs}: appended to the agent's arguments (starting with a comma). */
  private static AgentJvm startWithAgentArgs(String version, Path javaHome, String run, EtcdCluster etcd, int port,
      String moreAgentArgs, String... producerSettings) {
    String classpath = AgentProcesses.appClasspath() + File.pathSeparator + KafkaProducerIT.clientsJar(version)
        + File.pathSeparator + System.getProperty("fencing.it.slf4j.jar");
    AgentJvm app = AgentJvm.builder().javaHome(javaHome).name("kafka-buffered-" + run)
        .agentArgs("lock=orders,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port
            + ",fenced.kafka=*-fenced-*,etcd.endpoints=" + etcd.endpoints() + moreAgentArgs)
        .classpath(classpath).mainClass(KafkaApp.class.getName())
        .args(concat(broker.bootstrapServers(), producerSettings))
        .start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    return app;
  }

  private static String[] concat(String first, String... rest) {
    String[] all = new String[rest.length + 1];
    all[0] = first;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }

  /** Metadata known and the connection open, so that nothing but the frozen broker holds records back. */
  private static void warmUp(AppStdin stdin, String open, String fenced) throws Exception {
    assertThat(stdin.run("SEND " + open + " warm plain")).startsWith("OK 0 ");
    assertThat(stdin.run("SEND " + fenced + " warm plain")).startsWith("OK 0 ");
  }

  private static void bufferWhileFrozen(AppStdin stdin, String open, String fenced) throws Exception {
    // Written to the frozen broker's socket while the lease is held: it lands when the broker is back.
    assertThat(stdin.run("BURST " + open + " plug 1")).isEqualTo("SENT 1");
    // Its request written, so that the later records wait behind it (one request in flight per connection) rather
    // than join its batch and leave with it before the deadline.
    assertThat(stdin.run("DRAINED")).startsWith("DRAINED ");
    assertThat(stdin.run("BURST " + open + " late " + LATE)).isEqualTo("SENT " + LATE);
    assertThat(stdin.run("BURST " + fenced + " flate 5")).isEqualTo("SENT 5");
  }

  /** {@code reason}: a regular expression for the block reason the buffered records toward the open topic fail with. */
  private static void assertDelivery(AppStdin stdin, String open, String fenced, String token, String reason,
      int port) throws Exception {
    assertThat(stdin.run("OUTCOMES plug")).isEqualTo("OUTCOMES ok=[plug-0] err=[]");
    String blocked = "org\\.apache\\.kafka\\.common\\.KafkaException: Fencing Agent blocked a kafka side effect: "
        + "lock 'orders', token " + token + ": " + reason
        + " \\(cause dev\\.fencing\\.agent\\.bootstrap\\.FencingBlockedException\\)";
    String late = IntStream.range(0, LATE).mapToObj(i -> "late-" + i + ": " + blocked)
        .collect(java.util.stream.Collectors.joining(", ", "\\[", "\\]"));
    String outcomes = stdin.run("OUTCOMES late");
    System.out.println("buffered records toward the open topic: " + outcomes);
    assertThat(outcomes).matches("OUTCOMES ok=\\[\\] err=" + late);
    assertThat(stdin.run("OUTCOMES flate")).isEqualTo("OUTCOMES ok=[flate-0, flate-1, flate-2, flate-3, flate-4] err=[]");

    assertThat(readAll(open)).extracting(ConsumerRecord::key).containsExactly("warm", "plug-0");
    List<ConsumerRecord<String, String>> onFenced = readAll(fenced);
    assertThat(onFenced).extracting(ConsumerRecord::key)
        .containsExactly("warm", "flate-0", "flate-1", "flate-2", "flate-3", "flate-4");
    for (ConsumerRecord<String, String> r : onFenced) {
      assertThat(KafkaProducerIT.headers(r)).as("headers of %s", r.key()).anyMatch(h -> h.startsWith("fencing=" + token + ";"));
    }
    String metrics = Http.get("http://127.0.0.1:" + port + "/metrics");
    assertThat(metrics).as("every buffered record that was kept from leaving is counted as blocked").contains(
        "fencing_side_effects_total{channel=\"kafka\",fenced=\"false\",lock=\"orders\",outcome=\"blocked\"} "
            + LATE + ".0");
  }

  /** Every record of partition 0 of {@code topic} up to its end. */
  private static List<ConsumerRecord<String, String>> readAll(String topic) {
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of("bootstrap.servers",
        broker.bootstrapServers(), "enable.auto.commit", "false"), new StringDeserializer(),
        new StringDeserializer())) {
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
}
