package dev.fencing.faults;

import dev.fencing.faults.History.AgentMetrics;
import dev.fencing.faults.History.Attempt;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.TcpProxy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One contending worker: its own TCP proxies to the coordinator's nodes (so it alone can be partitioned) and to the
 * resources ({@link DataPath}: so its writes to one resource alone can be held), its own wall clock (libfaketime's
 * control file: {@link #clockOffset}), and its successive
 * incarnations, each a {@link FaultWorker} JVM with the agent attached ({@code w1.1}, {@code w1.2}, ...: the
 * incarnation is part of every write id). Ending an incarnation drains its loop, scrapes its agent's counters and
 * keeps its log.
 */
final class WorkerSlot implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  /** Small, quick-starting JVMs: two cores for a dozen processes. */
  private static final List<String> JVM_OPTIONS = List.of("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
      "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");

  record Incarnation(String name, AgentJvm jvm, int statusPort) {
  }

  /** What the worker's agent says right now; null fields when it did not answer. */
  record Status(String worker, String state, long token, boolean reused) {
    boolean holding() {
      return "HOLDING".equals(state) && !reused;
    }
  }

  /** Debian's libfaketime (scripts/prerequisites.sh installs it). */
  static final Path LIBFAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");

  /**
   * The environment of a JVM whose wall clock follows {@code clockFile} (clock-jump): libfaketime preloaded, its
   * offset read from the control file (at most once a second), the monotonic clock not faked. Without
   * {@code FAKETIME_FORCE_MONOTONIC_FIX=0}, libfaketime 0.9.10 (Debian 12) still rewrites the deadline of every
   * timed wait on a monotonic condition variable as if the monotonic clock were faked, so each one returns at once:
   * every JVM thread that parks or waits with a timeout spins (about 1.5 of the machine's 2 cores for one worker),
   * which starved the rest of the run, most of all a Kafka broker starting again after broker-kill.
   */
  static Map<String, String> fakeClockEnv(Path clockFile) {
    Map<String, String> env = new java.util.LinkedHashMap<>();
    env.put("LD_PRELOAD", LIBFAKETIME.toString());
    env.put("FAKETIME_TIMESTAMP_FILE", clockFile.toString());
    env.put("FAKETIME_CACHE_DURATION", "1");
    env.put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    env.put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
    return env;
  }

  private static final HttpClient STATUS_CLIENT = HttpClient.newBuilder()
      .connectTimeout(Duration.ofMillis(500)).build();

  private final String name;
  private final FaultRun.Setup setup;
  private final List<TcpProxy> proxies;
  private final DataPath dataPath;
  private final Path clockFile;
  private final List<Attempt> attempts = new ArrayList<>();
  private final Map<String, AgentMetrics> metrics = new java.util.TreeMap<>();
  private final Map<String, java.util.Set<Long>> grants = new java.util.TreeMap<>();
  private Incarnation current;
  private int incarnations;

  WorkerSlot(String name, FaultRun.Setup setup, DataPath dataPath) {
    if (name.equals("w1") && !Files.isRegularFile(LIBFAKETIME)) {
      throw new IllegalStateException(LIBFAKETIME + " is missing: the clock-jump fault needs libfaketime (run"
          + " `apt-get update && apt-get install -y libfaketime`, or scripts/prerequisites.sh)");
    }
    this.name = name;
    this.setup = setup;
    this.proxies = setup.coordinator().clientPorts().stream().map(TcpProxy::new)
        .toList();
    this.dataPath = dataPath;
    try {
      this.clockFile = Files.createTempFile("fencing-faults-clock-" + name + "-", "");
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    if (skewable()) {
      clockOffset(0);
    }
  }

  /**
   * Whether this worker's wall clock can be skewed: w1 only. libfaketime slows every clock read of the JVM it is
   * preloaded into (~1 µs for System.nanoTime, ~5 µs for currentTimeMillis, measured on the shared machine), too
   * much to impose on every worker of a loaded machine.
   */
  boolean skewable() {
    return name.equals("w1");
  }

  /** The worker's proxies to the resources. */
  DataPath dataPath() {
    return dataPath;
  }

  /**
   * Sets the worker's wall clock to the real time plus {@code seconds} (libfaketime re-reads its control file at
   * most a second later); its monotonic clock is left alone. Written by a rename so a read never sees half a line.
   */
  void clockOffset(long seconds) {
    if (!skewable()) {
      throw new IllegalStateException(name + "'s clock cannot be skewed: only w1 runs with libfaketime");
    }
    try {
      Path next = clockFile.resolveSibling(clockFile.getFileName() + ".next");
      Files.writeString(next, (seconds < 0 ? "" : "+") + seconds + "\n");
      Files.move(next, clockFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot set " + name + "'s clock: " + e.getMessage(), e);
    }
  }

  String name() {
    return name;
  }

  Incarnation current() {
    return current;
  }

  /** Launches the next incarnation (without waiting for it to start: see {@link #awaitStarted()}). */
  void launch() {
    String id = name + "." + ++incarnations;
    int statusPort = Ports.freePort();
    Topology topology = setup.topology();
    String scope = topology.sections() ? "sections=" + FaultSections.declaration(topology.lockNames())
        : "lock=" + FaultRun.LOCK;
    // Every resource through the worker's own proxies (its data path), which the delay and data-partition faults hold.
    List<String> workerArgs = new ArrayList<>(List.of("name=" + id, "pg=" + dataPath.pgUrl(),
        "mariadb=" + dataPath.mariaUrl(), "http=" + dataPath.httpUrl(), "kafka=" + dataPath.kafka(),
        "topic=" + FaultRun.TOPIC, "pg-direct=" + setup.pgUrl(), "http-unfenced=" + setup.unfencedHttpUrl(),
        "kafka-direct=" + setup.kafkaDirect(), "unfenced-topic=" + FaultRun.UNFENCED_TOPIC,
        "status=http://127.0.0.1:" + statusPort + "/status", "interval-ms=100"));
    if (topology.locks() > 1) {
      workerArgs.add("locks=" + String.join(",", topology.lockNames()));
    }
    if (topology.work() == Topology.Work.OUTBOX) {
      workerArgs.add("outbox-http=" + setup.outboxHttpUrl());
      workerArgs.add("outbox-topic=" + OutboxReceiver.TOPIC);
      workerArgs.add("outbox-db=" + topology.db().label);
    }
    Topology.Work work = topology.work();
    workerArgs.add("work=" + work.label);
    List<Integer> ports = proxies.stream().map(TcpProxy::port).toList();
    if (work.captured()) {
      // The application's own lock client reaches the coordinator through the worker's proxies, as the agent would.
      workerArgs.add("coordinator=" + (topology.coordinator() == Topology.Coordinator.ZOOKEEPER
          ? String.join(",", ports.stream().map(p -> "127.0.0.1:" + p).toList())
          : String.join(",", ports.stream().map(p -> "http://127.0.0.1:" + p).toList())));
      workerArgs.add("ttl-ms=" + topology.ttlMs());
    }
    // A captured lock: the agent holds no lease of its own, it captures the worker's lock (its margin as the lease's).
    String lockArgs = work.captured() ? "lease.enabled=false,capture.safety-margin=500ms"
        : scope + "," + setup.coordinator().agentArgs(ports) + ",lease.ttl=" + topology.ttlMs() + "ms"
            + ",lease.safety-margin=500ms,etcd.timeout=2s";
    AgentJvm.Builder builder = AgentJvm.builder()
        .agentJar(setup.agentJar())
        .agentArgs(lockArgs + ",holder.id=" + id + ",http.port=" + statusPort
            + ",fenced.http=" + dataPath.httpHostPort() + ",fenced.kafka=" + FaultRun.TOPIC)
        .classpath(setup.classpath())
        .mainClass(FaultWorker.class.getName())
        .args(workerArgs.toArray(String[]::new))
        .name(id);
    JVM_OPTIONS.forEach(builder::jvmArg);
    if (skewable()) {
      fakeClockEnv(clockFile).forEach(builder::env);
    }
    current = new Incarnation(id, builder.start(), statusPort);
  }

  void awaitStarted() {
    current.jvm().awaitOutput("WORKER STARTED", START_TIMEOUT);
  }

  /** The agent's /status for the run's first lock (the JVM-wide one, with one lock). */
  Status status() {
    return statuses().get(setup.topology().lockNames().get(0));
  }

  /**
   * The agent's /status per lock, with a short timeout: a frozen worker does not answer. With sections each lock's
   * entry of {@code locks[]}; with one lock the top-level fields; with the worker's own lock its entry of
   * {@code captured[]}.
   */
  Map<String, Status> statuses() {
    List<String> locks = setup.topology().lockNames();
    Map<String, Status> out = new java.util.LinkedHashMap<>();
    String json = null;
    try {
      HttpResponse<String> r = STATUS_CLIENT.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + current.statusPort() + "/status")).timeout(Duration.ofMillis(700))
          .GET().build(), HttpResponse.BodyHandlers.ofString());
      json = r.body();
    } catch (IOException | RuntimeException e) {
      // no answer: unknown for every lock
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    String list = setup.topology().work().captured() ? "captured" : setup.topology().sections() ? "locks" : null;
    for (String lock : locks) {
      out.put(lock, parse(json, list, lock));
    }
    return out;
  }

  private Status parse(String json, String list, String lock) {
    try {
      String entry = json;
      if (json != null && list != null) {
        int from = json.indexOf("\"" + list + "\":[");
        int at = from < 0 ? -1 : json.indexOf("{\"lock\":\"" + lock + "\"", from);
        entry = at < 0 ? null : json.substring(at);
      }
      if (entry == null) {
        return new Status(current.name(), null, 0, false);
      }
      String token = Http.jsonField(entry, "token");
      return new Status(current.name(), Http.jsonField(entry, "state"),
          token == null || token.equals("null") ? 0 : Long.parseLong(token),
          "true".equals(Http.jsonField(entry, "tokenReused")));
    } catch (RuntimeException e) {
      return new Status(current.name(), null, 0, false);
    }
  }

  List<TcpProxy> proxies() {
    return proxies;
  }

  /** Asks the current incarnation to finish its iteration (without waiting: see {@link #retire()}). */
  void requestStop() {
    try {
      OutputStream stdin = current.jvm().process().getOutputStream();
      stdin.write("stop\n".getBytes(StandardCharsets.UTF_8));
      stdin.flush();
    } catch (IOException e) {
      // already gone: retire() records what it left
    }
  }

  /**
   * Waits for the drained incarnation, scrapes its agent's counters, ends it and records its attempts; its log is
   * copied into {@code logDir}.
   */
  void retire(Path logDir) {
    Incarnation inc = current;
    try {
      inc.jvm().awaitOutput("IDLE " + inc.name(), Duration.ofSeconds(40));
    } catch (AssertionError e) {
      System.out.println("  " + inc.name() + " did not drain within 40 s; its unfinished attempts count as open");
    }
    try {
      metrics.put(inc.name(), WorkerLog.metrics(Http.get("http://127.0.0.1:" + inc.statusPort() + "/metrics")));
    } catch (RuntimeException | AssertionError e) {
      System.out.println("  cannot scrape " + inc.name() + "'s metrics: " + e.getMessage());
    }
    inc.jvm().close();
    String output = inc.jvm().output();
    attempts.addAll(WorkerLog.parse(output));
    grants.put(inc.name(), WorkerLog.grants(output));
    Map<String, java.util.Set<Long>> byLock = WorkerLog.grantsByLock(output);
    for (String lock : setup.topology().lockNames()) {
      grants.put(inc.name() + "@" + lock, byLock.getOrDefault(lock, java.util.Set.of()));
    }
    try {
      Files.writeString(logDir.resolve(inc.name() + ".log"), output);
    } catch (IOException e) {
      System.out.println("  cannot keep " + inc.name() + "'s log: " + e.getMessage());
    }
  }

  List<Attempt> attempts() {
    return attempts;
  }

  Map<String, AgentMetrics> metrics() {
    return metrics;
  }

  /** Per incarnation, the tokens its agent was granted. */
  Map<String, java.util.Set<Long>> grants() {
    return grants;
  }

  @Override
  public void close() {
    if (current != null) {
      current.jvm().close();
    }
    proxies.forEach(TcpProxy::close);
    dataPath.close();
    try {
      Files.deleteIfExists(clockFile);
    } catch (IOException ignored) {
      // a temporary file
    }
  }
}
