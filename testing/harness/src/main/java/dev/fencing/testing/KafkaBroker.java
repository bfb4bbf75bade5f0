package dev.fencing.testing;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;

/**
 * A real Kafka broker: KRaft, one combined broker and controller, in a child JVM on free loopback ports with a
 * temporary log dir. Ready (answering the Admin API) on return from {@link #start()}, typically in ~4 s.
 *
 * <p>The broker's class path ({@code org.apache.kafka:kafka_2.13} and its dependencies) is resolved when the harness
 * is built and stored in the harness jar, so tests download nothing; {@code -Dfencing.kafka.broker.classpath}
 * overrides it. The harness talks to the broker with the Admin client of {@code org.apache.kafka:kafka-clients},
 * which the test class path must hold (any 3.x or 4.x version).
 *
 * <p>Single-node settings: replication factors and min ISR 1 (offsets, transactions, share groups), one partition
 * for the internal topics, no initial rebalance delay. The broker is stopped by {@link #close()} and, if a test run
 * is aborted, by a shutdown hook of the test JVM.
 */
public final class KafkaBroker implements AutoCloseable {
  /** System property naming the broker class path (overrides the one resolved at build time). */
  public static final String CLASSPATH_PROPERTY = "fencing.kafka.broker.classpath";
  private static final String CLASSPATH_RESOURCE = "kafka-broker.classpath";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

  private final Path root;
  private final Path logFile;
  private final int port;
  private Process process;
  private Admin admin;
  private String clusterId;
  private String classpath;
  private int controllerPort;
  private Map<String, String> overrides;

  private KafkaBroker(Path root, int port) {
    this.root = root;
    this.logFile = root.resolve("broker.log");
    this.port = port;
  }

  /** Starts a broker with the single-node defaults; ready on return. */
  public static KafkaBroker start() {
    return start(Map.of());
  }

  /** Starts a broker with extra or overriding server.properties entries; ready on return. */
  public static KafkaBroker start(Map<String, String> serverProperties) {
    String classpath = brokerClasspath();
    try {
      Class.forName("org.apache.kafka.clients.admin.Admin", false, KafkaBroker.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("KafkaBroker needs org.apache.kafka:kafka-clients on the test class path "
          + "(add it as a test dependency)", e);
    }
    Path root;
    try {
      root = Files.createTempDirectory("fencing-kafka-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int[] ports = Ports.freePorts(2);
    KafkaBroker broker = new KafkaBroker(root, ports[0]);
    try {
      broker.launch(classpath, ports[1], serverProperties);
      broker.awaitReady(START_TIMEOUT);
      return broker;
    } catch (RuntimeException | Error e) {
      broker.close();
      throw e;
    }
  }

  /** {@code 127.0.0.1:<port>}, for {@code bootstrap.servers}. */
  public String bootstrapServers() {
    return "127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** Creates a topic (replication factor 1) and waits until every partition has a leader. */
  public void createTopic(String name, int partitions) {
    try {
      admin().createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all()
          .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
      while (true) {
        TopicDescription d = describe(name);
        if (d != null && d.partitions().size() == partitions
            && d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError("topic " + name + " has no leader for every partition after " + ADMIN_TIMEOUT
              + ": " + d + "\n" + logTail(40));
        }
        Processes.sleep(50);
      }
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot create topic " + name + " on " + this + "\n" + logTail(40), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while creating topic " + name, e);
    }
  }

  /**
   * The topic's description, or null while the broker's metadata does not know the topic yet: right after its
   * creation a describe can still answer UnknownTopicOrPartition on a busy machine.
   */
  private TopicDescription describe(String name) throws InterruptedException, ExecutionException, TimeoutException {
    try {
      return admin().describeTopics(List.of(name)).allTopicNames()
          .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(name);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
        return null;
      }
      throw e;
    }
  }

  /** An Admin client of this broker, owned by the broker (closed with it): do not close it. */
  public synchronized Admin admin() {
    if (admin == null) {
      Properties p = new Properties();
      p.put("bootstrap.servers", bootstrapServers());
      p.put("request.timeout.ms", "10000");
      p.put("default.api.timeout.ms", "30000");
      admin = Admin.create(p);
    }
    return admin;
  }

  public Path logFile() {
    return logFile;
  }

  /** The end of the broker's log, for failure messages. */
  public String logTail(int lines) {
    return Processes.tail(logFile, lines);
  }

  public boolean isAlive() {
    return process != null && process.isAlive();
  }

  /**
   * Freezes the broker (SIGSTOP): its connections stay open but nothing is answered, as a broker stuck in a long
   * pause or behind a stalled network path; clients keep their records buffered.
   */
  public void suspend() {
    Processes.signal(process.pid(), "STOP");
  }

  /** Thaws a {@link #suspend() suspended} broker (SIGCONT). */
  public void resume() {
    Processes.signal(process.pid(), "CONT");
  }

  /** Stops the broker (SIGTERM, SIGKILL after 10 s) and deletes its log dir. */
  @Override
  public synchronized void close() {
    try {
      if (admin != null) {
        admin.close(Duration.ofSeconds(2));
        admin = null;
      }
    } finally {
      try {
        stopProcess();
      } finally {
        Processes.deleteTree(root);
      }
    }
  }

  @Override
  public String toString() {
    return "Kafka broker " + bootstrapServers() + (isAlive() ? " (pid " + process.pid() + ")" : " (not running)");
  }

  /** SIGKILL of the broker, as a crash (records it had written stay in its log dir); {@link #restart()} brings it back. */
  public synchronized void kill() {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while killing " + this, e);
      }
    }
  }

  /**
   * Starts a {@link #kill() killed} broker again: same ports, log dir and cluster id; ready on return (within
   * {@code timeout}: with clients retrying against it on a loaded machine a restart has taken up to a minute).
   */
  public void restart(Duration timeout) {
    synchronized (this) {
      if (process != null && process.isAlive()) {
        return;
      }
      // A fresh Admin client: the one that met the killed broker may still wait on its dead connection.
      if (admin != null) {
        admin.close(Duration.ZERO);
        admin = null;
      }
      launch(classpath, controllerPort, overrides);
    }
    awaitReady(timeout);
  }

  /**
   * The server.properties of a launch. An override's value may name the broker's own ports as {@code {port}} and
   * {@code {controller.port}} (extra listeners beside the harness's).
   */
  private void launch(String classpath, int controllerPort, Map<String, String> overrides) {
    this.classpath = classpath;
    this.controllerPort = controllerPort;
    this.overrides = overrides;
    if (clusterId == null) {
      clusterId = newClusterId();
    }
    Map<String, String> props = new LinkedHashMap<>();
    props.put("process.roles", "broker,controller");
    props.put("node.id", "1");
    props.put("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
    props.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
    props.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
    props.put("controller.listener.names", "CONTROLLER");
    props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    props.put("log.dirs", root.resolve("data").toString());
    props.put("num.partitions", "1");
    props.put("offsets.topic.replication.factor", "1");
    props.put("offsets.topic.num.partitions", "1");
    props.put("transaction.state.log.replication.factor", "1");
    props.put("transaction.state.log.min.isr", "1");
    props.put("transaction.state.log.num.partitions", "1");
    props.put("share.coordinator.state.topic.replication.factor", "1");
    props.put("share.coordinator.state.topic.min.isr", "1");
    props.put("group.initial.rebalance.delay.ms", "0");
    overrides.forEach((key, value) -> props.put(key, value.replace("{port}", Integer.toString(port))
        .replace("{controller.port}", Integer.toString(controllerPort))));
    Path serverProperties = root.resolve("server.properties");
    Path log4j = root.resolve("log4j2.properties");
    try {
      Files.writeString(serverProperties, props.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
          .collect(Collectors.joining("\n", "", "\n")));
      Files.writeString(log4j, String.join("\n",
          "appender.out.type=Console",
          "appender.out.name=out",
          "appender.out.layout.type=PatternLayout",
          "appender.out.layout.pattern=[%d{HH:mm:ss,SSS}] %p %m (%c{1})%n",
          "rootLogger.level=info",
          "rootLogger.appenderRef.out.ref=out",
          ""));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xms128m", "-Xmx512m",
        // C1 only: the broker starts faster and a test's load never needs C2; two cores are shared with the tests.
        "-XX:TieredStopAtLevel=1",
        "-Djava.awt.headless=true",
        "-Dlog4j2.configurationFile=" + log4j,
        "-cp", harnessClasses() + File.pathSeparator + classpath,
        KafkaBrokerMain.class.getName(), clusterId, serverProperties.toString()));
    try {
      process = Processes.reapOnExit(new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
          .start());
      process.getOutputStream().close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the Kafka broker JVM; see " + logFile, e);
    }
  }

  private void awaitReady(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException("the Kafka broker exited with code " + process.exitValue()
            + " while starting\n" + logTail(60));
      }
      try {
        if (!admin().describeCluster().nodes().get(2, TimeUnit.SECONDS).isEmpty()) {
          return;
        }
      } catch (ExecutionException | TimeoutException e) {
        last = e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for " + this, e);
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the Kafka broker did not answer within " + timeout + ": " + last
            + "\n" + logTail(60));
      }
      Processes.sleep(100);
    }
  }

  private void stopProcess() {
    if (process == null || !process.isAlive()) {
      return;
    }
    try {
      Processes.signal(process.pid(), "CONT"); // a suspended broker would not act on SIGTERM
    } catch (IllegalStateException exitedMeanwhile) {
      // nothing left to resume
    }
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }

  /**
   * A KRaft cluster id: a random UUID, URL-safe base64 without padding (as kafka-storage random-uuid prints). Never one
   * that starts with '-': the storage tool would take it for an option ("expected one argument"), about one start in
   * 64; Kafka's own Uuid.randomUuid() draws again for the same reason.
   */
  static String newClusterId() {
    while (true) {
      UUID u = UUID.randomUUID();
      byte[] b = new byte[16];
      for (int i = 0; i < 8; i++) {
        b[i] = (byte) (u.getMostSignificantBits() >>> (56 - 8 * i));
        b[8 + i] = (byte) (u.getLeastSignificantBits() >>> (56 - 8 * i));
      }
      String id = Base64.getUrlEncoder().withoutPadding().encodeToString(b);
      if (!id.startsWith("-")) {
        return id;
      }
    }
  }

  /** Where {@link KafkaBrokerMain} is: the harness jar or its classes directory. */
  private static String harnessClasses() {
    try {
      return Path.of(KafkaBrokerMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The broker class path: the system property, else the one the harness build resolved; every entry must exist. */
  static String brokerClasspath() {
    String cp = System.getProperty(CLASSPATH_PROPERTY);
    String origin = "-D" + CLASSPATH_PROPERTY;
    if (cp == null || cp.isBlank()) {
      origin = "the harness resource " + CLASSPATH_RESOURCE;
      try (InputStream in = KafkaBroker.class.getResourceAsStream(CLASSPATH_RESOURCE)) {
        cp = in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    String rebuild = ": build the harness with Maven (`mvn -B install -DskipTests -pl testing/harness -am`), which "
        + "resolves org.apache.kafka:kafka_2.13 from Maven Central, or set -D" + CLASSPATH_PROPERTY
        + " to the broker's class path";
    if (cp == null || cp.isEmpty()) {
      throw new IllegalStateException("the Kafka broker class path is missing (" + origin + ")" + rebuild);
    }
    for (String entry : cp.split(File.pathSeparator)) {
      if (!Files.isReadable(Path.of(entry))) {
        throw new IllegalStateException("the Kafka broker class path (" + origin + ") names " + entry
            + ", which does not exist" + rebuild);
      }
    }
    return cp;
  }
}
