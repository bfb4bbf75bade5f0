package dev.fencing.faults;

import dev.fencing.testing.AgentJvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The outbox relays of {@code --work=outbox}: one standalone relay per worker, as on each worker's host
 * ({@code java -jar fencing-agent.jar outbox relay}, its own JVM without the agent), all on the one outbox table,
 * each named {@code r<worker>.<incarnation>} in {@code claimed_by}. A relay killed mid-delivery
 * ({@link #kill}) is replaced by its next incarnation at once; the events it had claimed wait for their
 * claim to expire ({@value #CLAIM_TIMEOUT}) and go again, from whichever relay claims them.
 */
final class OutboxRelays implements AutoCloseable {
  /** Short, so that a killed relay's claims come back within a trial. */
  static final String CLAIM_TIMEOUT = "3s";
  private static final List<String> JVM_OPTIONS = List.of("-Xmx128m", "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1");

  private final Path agentJar;
  private final String jdbcUrl;
  private final String kafkaBootstrap;
  private final String driverJar;
  private final String kafkaJars;
  private final List<AgentJvm> current = new ArrayList<>();
  private final List<String> names = new ArrayList<>();
  private final int[] incarnations;
  private final List<AgentJvm> ended = new ArrayList<>();
  private int kills;

  /** {@code driverPrefix}: how the file name of the JDBC driver's jar for {@code jdbcUrl} starts. */
  OutboxRelays(Path agentJar, String jdbcUrl, String driverPrefix, String kafkaBootstrap, int count) {
    this.agentJar = agentJar;
    this.jdbcUrl = jdbcUrl;
    this.kafkaBootstrap = kafkaBootstrap;
    List<String> classpath = Arrays.asList(System.getProperty("java.class.path").split(java.io.File.pathSeparator));
    this.driverJar = jar(classpath, driverPrefix);
    this.kafkaJars = jar(classpath, "kafka-clients-") + java.io.File.pathSeparator + jar(classpath, "slf4j-api-");
    this.incarnations = new int[count];
    for (int i = 0; i < count; i++) {
      current.add(null);
      names.add(null);
    }
  }

  /** The jar of the harness's own class path whose file name starts with {@code prefix}. */
  private static String jar(List<String> classpath, String prefix) {
    return classpath.stream().filter(e -> Path.of(e).getFileName().toString().startsWith(prefix)
        && e.endsWith(".jar")).findFirst().orElseThrow(() -> new IllegalStateException("no " + prefix
        + "*.jar on the harness's class path: the outbox relays need it (--driver-jar, --kafka-jar)"));
  }

  /** Starts every relay and waits until each runs. */
  void start() {
    for (int i = 0; i < current.size(); i++) {
      launch(i);
    }
    for (int i = 0; i < current.size(); i++) {
      awaitRunning(i);
    }
  }

  private void launch(int i) {
    String id = "r" + (i + 1) + "." + ++incarnations[i];
    AgentJvm.Builder b = AgentJvm.builder().noAgent().executableJar(agentJar).name("relay-" + id)
        .args("outbox", "relay", "--jdbc-url", jdbcUrl, "--driver-jar", driverJar, "--table",
            FaultWorker.OUTBOX_TABLE, "--kafka-bootstrap", kafkaBootstrap, "--kafka-jar", kafkaJars,
            "--relay-id", id, "--claim-timeout", CLAIM_TIMEOUT, "--request-timeout", "2s", "--backoff", "200ms",
            "--backoff-cap", "2s", "--max-attempts", "200", "--poll-interval", "2s");
    JVM_OPTIONS.forEach(b::jvmArg);
    current.set(i, b.start());
    names.set(i, id);
  }

  private void awaitRunning(int i) {
    current.get(i).awaitOutput("outbox relay: " + names.get(i) + " running", Duration.ofSeconds(60));
  }

  int size() {
    return current.size();
  }

  /** The index of the relay named {@code id} ({@code claimed_by}), or -1. */
  int indexOf(String id) {
    return names.indexOf(id);
  }

  String name(int i) {
    return names.get(i);
  }

  /** SIGKILLs relay {@code i}; its name. {@link #restart} starts its next incarnation. */
  String kill(int i) {
    AgentJvm jvm = current.get(i);
    String name = names.get(i);
    jvm.process().destroyForcibly();
    try {
      jvm.process().waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ended.add(jvm);
    kills++;
    return name;
  }

  /** Starts the next incarnation of the killed relay {@code i} and waits until it runs. */
  void restart(int i) {
    launch(i);
    awaitRunning(i);
  }

  /** How many relays were killed. */
  int kills() {
    return kills;
  }

  /** Starts again any relay that died by itself; their names. */
  List<String> restartDead() {
    List<String> dead = new ArrayList<>();
    for (int i = 0; i < current.size(); i++) {
      if (!current.get(i).isAlive()) {
        dead.add(names.get(i) + " (exit " + current.get(i).process().exitValue() + ")");
        ended.add(current.get(i));
        launch(i);
        awaitRunning(i);
      }
    }
    return dead;
  }

  /** Stops the relays (SIGTERM: each finishes its batch) and keeps every relay's log in {@code dir} (null: none). */
  void stop(Path dir) {
    for (AgentJvm jvm : current) {
      if (jvm != null) {
        jvm.close();
        ended.add(jvm);
      }
    }
    current.replaceAll(j -> null);
    if (dir != null) {
      for (AgentJvm jvm : ended) {
        try {
          Files.copy(jvm.logFile(), dir.resolve(jvm.logFile().getFileName()),
              java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
          System.out.println("  cannot keep " + jvm + "'s log: " + e.getMessage());
        }
      }
    }
  }

  @Override
  public void close() {
    stop(null);
  }
}
