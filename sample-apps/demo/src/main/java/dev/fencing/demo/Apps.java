package dev.fencing.demo;

import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Launches the sample apps as separate JVMs, the way an operator would: the agent is attached from the command line
 * only ({@code -javaagent:fencing-agent.jar=...}); the workers' configuration names the lock, etcd, and which
 * destinations are fenced (the inventory service and the transfers topic), never the webhook.
 */
final class Apps {
  static final String TTL = "3s";
  static final String SAFETY_MARGIN = "500ms";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  /** Small, quick-starting JVMs: the machine may have two cores for eight processes. */
  private static final String[] JVM_OPTIONS = {"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
      "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"};

  private final DemoOptions options;
  private final Infrastructure infra;
  private final Resources resources;
  private final List<AgentJvm> started = new ArrayList<>();

  final int servicePort = Ports.freePort();
  final int serviceAgentPort = Ports.freePort();
  final int consumerMetricsPort = Ports.freePort();
  final int relayMetricsPort = Ports.freePort();

  Apps(DemoOptions options, Infrastructure infra, Resources resources) {
    this.options = options;
    this.infra = infra;
    this.resources = resources;
  }

  /** Every JVM started so far, for the log paths in a failure message. */
  List<AgentJvm> started() {
    return started;
  }

  /** The inventory service, with the agent but no lease of its own (cross-hop propagation only). */
  AgentJvm startService() {
    AgentJvm jvm = launch(AgentJvm.builder()
        .agentJar(options.agentJar())
        .agentArgs("lease.enabled=false,http.port=" + serviceAgentPort + mode())
        .classpath(options.appClasspath("inventory-service"))
        .mainClass("dev.fencing.sample.inventory.InventoryService")
        .args("port=" + servicePort, "jdbc=" + infra.inventoryUrl(), "lock=" + Infrastructure.LOCK)
        .name("inventory-service"));
    jvm.awaitOutput("SERVICE STARTED", START_TIMEOUT);
    return jvm;
  }

  /** The audit consumer: no agent, the consumer fence configured by properties. */
  AgentJvm startConsumer() {
    AgentJvm jvm = launch(AgentJvm.builder()
        .noAgent()
        .classpath(options.appClasspath("audit-consumer"))
        .mainClass("dev.fencing.sample.audit.AuditConsumer")
        .args("kafka=" + infra.kafka.bootstrapServers(), "topic=" + Infrastructure.TOPIC,
            "fence-jdbc=" + infra.bankUrl(), "metrics-port=" + consumerMetricsPort, "lock=" + Infrastructure.LOCK)
        .name("audit-consumer"));
    jvm.awaitOutput("CONSUMER ASSIGNED", START_TIMEOUT);
    return jvm;
  }

  /**
   * The outbox relay, as an operator runs it: {@code java -jar fencing-agent.jar outbox relay} in its own JVM, no
   * agent attached, on the bank database's outbox (PostgreSQL wakes it at each commit).
   */
  AgentJvm startRelay() {
    String driver = java.util.Arrays.stream(options.appClasspath("ledger-worker").split(java.io.File.pathSeparator))
        .filter(p -> p.contains("postgresql")).findFirst()
        .orElseThrow(() -> new StoryBroken("no PostgreSQL driver jar on the ledger worker's class path"));
    AgentJvm jvm = launch(AgentJvm.builder()
        .noAgent()
        .executableJar(options.agentJar())
        .args("outbox", "relay", "--jdbc-url", infra.bankUrl(), "--driver-jar", driver,
            "--table", Infrastructure.OUTBOX, "--metrics-port", Integer.toString(relayMetricsPort),
            "--request-timeout", "5s", "--poll-interval", "1s", "--claim-timeout", "15s", "--backoff", "200ms")
        .name("outbox-relay"));
    jvm.awaitOutput(" running on ", START_TIMEOUT);
    return jvm;
  }

  /** One ledger worker with the agent attached: lock ledger, a short lease, its status endpoint on a free port. */
  Worker startWorker(String name, int webhookPort) {
    int statusPort = Ports.freePort();
    AgentJvm jvm = launch(AgentJvm.builder()
        .agentJar(options.agentJar())
        .agentArgs("lock=" + Infrastructure.LOCK + ",etcd.endpoints=" + infra.etcdEndpoints()
            + ",lease.ttl=" + TTL + ",lease.safety-margin=" + SAFETY_MARGIN + ",holder.id=" + name
            + ",http.port=" + statusPort + ",fenced.http=127.0.0.1:" + servicePort
            + ",fenced.kafka=" + Infrastructure.TOPIC + mode())
        .classpath(options.appClasspath("ledger-worker"))
        .mainClass("dev.fencing.sample.ledger.LedgerWorker")
        .args("name=" + name, "jdbc=" + infra.bankUrl(),
            "inventory=http://127.0.0.1:" + servicePort + "/reservations",
            "kafka=" + infra.kafka.bootstrapServers(), "topic=" + Infrastructure.TOPIC,
            "webhook=http://127.0.0.1:" + webhookPort + "/hooks/transfer",
            "outbox=" + Infrastructure.OUTBOX,
            "notify=http://127.0.0.1:" + webhookPort + WebhookReceiver.OUTBOX_PATH,
            "accounts=" + Infrastructure.ACCOUNTS)
        .name(name));
    jvm.awaitOutput("WORKER STARTED", START_TIMEOUT);
    return new Worker(name, statusPort, jvm);
  }

  private String mode() {
    return options.observe() ? ",mode=observe" : "";
  }

  private AgentJvm launch(AgentJvm.Builder builder) {
    for (String option : JVM_OPTIONS) {
      builder.jvmArg(option);
    }
    AgentJvm jvm = resources.add(builder.start());
    started.add(jvm);
    return jvm;
  }

  /** A ledger worker JVM and its agent's status endpoint. */
  record Worker(String name, int statusPort, AgentJvm jvm) {
    Status status() {
      return Status.parse(Http.get("http://127.0.0.1:" + statusPort + "/status"));
    }

    /** Null while the endpoint is not up yet. */
    Status tryStatus() {
      try {
        return status();
      } catch (RuntimeException e) {
        return null;
      }
    }

    String metrics() {
      return Http.get("http://127.0.0.1:" + statusPort + "/metrics");
    }

    /** Ends the work loop after the current transfer; the JVM stays up (and scrapable) until closed. */
    void drain() {
      try {
        OutputStream stdin = jvm.process().getOutputStream();
        stdin.write("stop\n".getBytes(StandardCharsets.UTF_8));
        stdin.flush();
      } catch (IOException e) {
        throw new StoryBroken("cannot tell " + name + " to stop: " + e.getMessage(), e);
      }
      jvm.awaitOutput("WORKER IDLE", Duration.ofSeconds(30));
    }
  }

  /** The fields of the agent's GET /status the story needs. */
  record Status(String state, long token, String lastLossReason, String json) {
    static Status parse(String json) {
      return new Status(Http.jsonField(json, "state"), Long.parseLong(Http.jsonField(json, "token")),
          Http.jsonField(json, "lastLossReason"), json);
    }

    boolean holding() {
      return state.equals("HOLDING");
    }
  }
}
