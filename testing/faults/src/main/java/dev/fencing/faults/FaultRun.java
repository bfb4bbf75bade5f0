package dev.fencing.faults;

import dev.fencing.faults.History.Accepted;
import dev.fencing.faults.History.Attempt;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.protocol.SessionVariables;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.MariaDbServer;
import dev.fencing.testing.PgBouncer;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.TcpProxy;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * The fault harness ({@code scripts/faults.sh [trials]}): 2-3 agent-attached {@link FaultWorker}s contend for one
 * lock and write through fenced PostgreSQL, MariaDB, an HTTP fence and the Kafka consumer fence, while each trial
 * injects one fault, round-robin:
 * <ul>
 *   <li>{@code pause}: SIGSTOP of the holder past its TTL, at a random point of its loop (often mid-call);</li>
 *   <li>{@code partition}: the holder's TCP proxies to etcd blackhole past the TTL, then heal;</li>
 *   <li>{@code leader-kill}: SIGKILL of the etcd leader (3-node cluster), restarted a moment later;</li>
 *   <li>{@code etcd-restart}: every etcd node stopped, then started again;</li>
 *   <li>{@code etcd-wipe}: coordinator data loss: a brand-new cluster on the same ports. The running agents meet it
 *       (token reuse: they must block); on every tenth wipe fresh workers are started against it (low tokens: the
 *       fences must reject); then the operator's remedy from the runbook: etcd's revision is bumped above every
 *       token issued and the holders made to acquire the lock again (leases revoked).</li>
 *   <li>at the resources and the clocks, one class each ({@link FaultKind}): {@code delay} ({@link DelayFault}),
 *       {@code data-partition}, {@code db-restart}, {@code broker-kill}, {@code clock-jump}.</li>
 * </ul>
 * With {@code --coordinator=zookeeper} a 3-server ZooKeeper ensemble takes etcd's place and the same faults hit it
 * ({@link FaultCoordinator}); {@code --locks=N} and {@code --partitions=N} shape the locks and the Kafka topic
 * ({@link Topology}).
 * The infrastructure and the workers live for the whole run; fresh workers only on every tenth wipe. At the end the
 * workers are drained and scraped, the resources read, and {@link HistoryChecker} judges the whole history; the last
 * line printed is its summary.
 */
public final class FaultRun implements FaultKind.Trial {
  static final String LOCK = History.LOCK;
  static final String TOPIC = "faults";
  static final String DEAD_LETTER_TOPIC = "faults.fenced";
  /** The unfenced topic: one partition (its offsets are the arrival order), not in the agents' fenced.kafka. */
  static final String UNFENCED_TOPIC = "unfenced-writes";
  private static final Duration HOLDER_TIMEOUT = Duration.ofSeconds(30);
  static final String KINDS = "fencing.faults.kinds";
  private static final List<Fault> ROTATION = Fault.rotation(System.getProperty(KINDS));

  /** The kinds of fault, injected round-robin; those at the resources and the clocks have a class each. */
  enum Fault {
    PAUSE("pause"), PARTITION("partition"), LEADER_KILL("leader-kill"), ETCD_RESTART("etcd-restart"),
    ETCD_WIPE("etcd-wipe"), DELAY("delay", new DelayFault()), DATA_PARTITION("data-partition",
        new DataPartitionFault()), DB_RESTART("db-restart", new DbRestartFault()), BROKER_KILL("broker-kill",
        new BrokerKillFault()), CLOCK_JUMP("clock-jump", new ClockJumpFault());

    final String label;
    final FaultKind kind;

    /** {@code -Dfencing.faults.kinds=delay,clock-jump}: only these kinds, round-robin (default: every kind). */
    static List<Fault> rotation(String labels) {
      if (labels == null || labels.isBlank()) {
        return List.of(values());
      }
      List<Fault> kinds = new ArrayList<>();
      for (String label : labels.split(",")) {
        kinds.add(java.util.Arrays.stream(values()).filter(f -> f.label.equals(label.strip())).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("unknown fault kind '" + label + "' in -D" + KINDS
                + ", expected some of " + java.util.Arrays.stream(values()).map(f -> f.label).toList())));
      }
      return List.copyOf(kinds);
    }

    Fault(String label) {
      this(label, null);
    }

    Fault(String label, FaultKind kind) {
      this.label = label;
      this.kind = kind;
    }
  }

  /**
   * What a worker needs to know about the resources: their direct URLs, which its data path ({@link DataPath}) puts
   * its own proxies in front of.
   */
  record Setup(Path agentJar, String classpath, String pgUrl, String mariaUrl, String httpUrl, Topology topology,
      FaultCoordinator coordinator, String unfencedHttpUrl, String kafkaDirect) {
  }

  /**
   * How to run: trials, seed, number of workers, the agent jar, where the history goes, and {@code poolSize}: 0 for
   * workers connected straight to PostgreSQL, else the server pool of a PgBouncer in transaction mode that the
   * workers (only they) go through.
   */
  public record Options(int trials, long seed, int workers, Path agentJar, Path outDir, int poolSize,
      Topology topology) {
    public static final String USAGE = "usage: scripts/faults.sh [trials] [--seed=N] [--workers=2|3] [--out=DIR]"
        + " [--pooler[=POOL_SIZE]] [--coordinator=etcd|zookeeper] [--locks=N] [--partitions=N]"
        + " [--work=jvm|section|curator|jetcd|leader]";
    /** {@code --pooler} alone: 2 server connections, fewer than the workers, so they share backends. */
    public static final int DEFAULT_POOL_SIZE = 2;

    /** Workers straight to PostgreSQL. */
    public Options(int trials, long seed, int workers, Path agentJar, Path outDir) {
      this(trials, seed, workers, agentJar, outDir, 0);
    }

    /** etcd, one lock, {@value Topology#DEFAULT_PARTITIONS} partitions. */
    public Options(int trials, long seed, int workers, Path agentJar, Path outDir, int poolSize) {
      this(trials, seed, workers, agentJar, outDir, poolSize, Topology.DEFAULT);
    }

    public boolean pooler() {
      return poolSize > 0;
    }

    /** What the summary line and RELIABILITY.md say about the workers' way to PostgreSQL. */
    public String poolerLabel() {
      return pooler() ? "pooler=pgbouncer-transaction pool_size=" + poolSize : "pooler=none";
    }

    public static Options parse(String[] args) {
      return parse(args, null);
    }

    /** {@code agentJar} null: {@link #defaultAgentJar()}, looked up once the arguments are known to be valid. */
    static Options parse(String[] args, Path agentJar) {
      int trials = 200;
      long seed = System.nanoTime() & 0xFFFF_FFFFL;
      int workers = 3;
      int poolSize = 0;
      Path out = null;
      Topology topology = Topology.DEFAULT;
      for (String arg : args) {
        Topology applied;
        if ((applied = Topology.apply(topology, arg)) != null) {
          topology = applied;
        } else if (arg.equals("--pooler")) {
          poolSize = DEFAULT_POOL_SIZE;
        } else if (arg.matches("--pooler=\\d+")) {
          poolSize = Integer.parseInt(arg.substring(9));
          if (poolSize < 1) {
            throw new IllegalArgumentException("--pooler=N needs at least 1 server connection\n" + USAGE);
          }
        } else if (arg.startsWith("--seed=")) {
          seed = Long.parseLong(arg.substring(7));
        } else if (arg.startsWith("--workers=")) {
          workers = Integer.parseInt(arg.substring(10));
        } else if (arg.startsWith("--out=")) {
          out = Path.of(arg.substring(6));
        } else if (arg.matches("\\d+")) {
          trials = Integer.parseInt(arg);
        } else {
          throw new IllegalArgumentException("unknown argument '" + arg + "'\n" + USAGE);
        }
      }
      if (workers < 2 || workers > 3 || trials < 1) {
        throw new IllegalArgumentException("need 1+ trials and 2 or 3 workers\n" + USAGE);
      }
      return new Options(trials, seed, workers, agentJar != null ? agentJar : defaultAgentJar(), out, poolSize,
          topology);
    }

    /** {@code -Dfencing.agent.jar}, else agent/jar/target/fencing-agent.jar under the current directory. */
    public static Path defaultAgentJar() {
      Path jar = Path.of(System.getProperty("fencing.agent.jar", "agent/jar/target/fencing-agent.jar"));
      if (!Files.isRegularFile(jar)) {
        throw new IllegalStateException(jar.toAbsolutePath() + " is missing: build the agent first (`mvn -B install"
            + " -DskipTests -pl testing/faults -am`; scripts/faults.sh does), or set -Dfencing.agent.jar");
      }
      return jar.toAbsolutePath();
    }
  }

  /**
   * The run's verdict, the counts per fault, where its history was written, and the accepted writes per
   * {@link Accepted#stream()} (resource, lock, partition).
   */
  public record Outcome(HistoryChecker.Result result, Map<Fault, Integer> faults, List<String> notes, Path outDir,
      String summary, PoolerReport pooler, Map<String, Long> acceptedPerStream) {
  }

  /**
   * What shows that the workers wrote through the pooler, from both sides: PgBouncer's own counters ({@code SHOW
   * STATS}: transactions it relayed; {@code SHOW SERVERS}/{@code SHOW CLIENTS}, sampled after each trial: the most
   * server and client connections it had) and PostgreSQL's rows (each pg_write row records the backend that wrote
   * it, so a backend that wrote rows of several workers was shared between them, and SHOW SERVERS' remote_pid
   * names the backends behind PgBouncer's server connections).
   */
  public record PoolerReport(String mode, int poolSize, long transactions, long queries, int serverConnections,
      int clients, long backends, long backendsOfThePooler, long sharedBackends, int maxWorkersPerBackend) {
    String describe() {
      return "pooler: PgBouncer " + mode + " pooling, pool_size=" + poolSize + ": relayed " + transactions
          + " transactions (" + queries + " queries); " + clients + " client and " + serverConnections
          + " server connections at most; the pg rows were written by " + backends + " backends (" + backendsOfThePooler
          + " of them seen as PgBouncer's server connections), " + sharedBackends
          + " of them shared by several workers (up to " + maxWorkersPerBackend + ")";
    }
  }

  private final Options options;
  private final PrintStream out;
  private final Random random;
  private final Deque<AutoCloseable> open = new ArrayDeque<>();
  private final long started = System.currentTimeMillis();
  private final List<String> notes = new ArrayList<>();
  private final List<String> trialLog = new ArrayList<>();
  private final List<long[]> freezes = new ArrayList<>();
  private final List<String> frozenWorkers = new ArrayList<>();
  private final Topology topology;
  private FaultCoordinator coordinator;
  private PostgresServer postgres;
  private MariaDbServer maria;
  private PgBouncer bouncer;
  private int maxServers;
  private int maxClients;
  /** The backend pids of PgBouncer's server connections (SHOW SERVERS' remote_pid), as sampled. */
  private final java.util.Set<String> bouncerBackends = new java.util.TreeSet<>();
  private KafkaBroker kafka;
  private HttpWriteServer http;
  private KafkaSink sink;
  private final List<WorkerSlot> slots = new ArrayList<>();
  private Path outDir;
  private int wipes;
  /** When each wipe began (epoch ms): the unfenced destinations' holders are ordered within one history. */
  private final List<Long> wipeTimes = new ArrayList<>();
  private final Map<Fault, List<Long>> recovery = new EnumMap<>(Fault.class);
  private final List<DelayedWrites.Hold> holds = new ArrayList<>();
  private final List<String> faultViolations = new ArrayList<>();
  private DataPath.Plan dataPaths;

  private FaultRun(Options options, PrintStream out) {
    this.options = options;
    this.out = out;
    this.random = new Random(options.seed());
    this.topology = options.topology();
  }

  public static void main(String[] args) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException | IllegalStateException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    Outcome outcome = run(options, System.out);
    boolean harnessFailed = outcome.notes().stream().anyMatch(n -> n.startsWith("harness:"));
    System.exit(outcome.result().ok() && !harnessFailed ? 0 : 1);
  }

  /** Runs the trials and the checker; everything started is stopped before it returns. */
  public static Outcome run(Options options, PrintStream out) {
    FaultRun run = new FaultRun(options, out);
    try {
      return run.execute();
    } finally {
      run.closeAll();
    }
  }

  private Outcome execute() {
    out.println("fault run: " + options.trials() + " trials, " + options.workers() + " workers, seed="
        + options.seed() + ", lease TTL " + topology.ttlMs() + " ms, " + topology.describe() + (options.pooler() ? ", workers reach PostgreSQL through"
        + " PgBouncer (transaction pooling, " + options.poolSize() + " server connections, to PostgreSQL's Unix socket)"
        : ""));
    try {
      outDir = options.outDir() != null ? Files.createDirectories(options.outDir())
          : Files.createTempDirectory("fencing-faults-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    startInfrastructure();
    // Only the workers go through the pooler; the harness's own reads (the checker's view) go straight to PostgreSQL.
    String workerPgUrl = bouncer != null ? bouncer.jdbcUrl("postgres", postgres.user()) : postgres.jdbcUrl();
    Setup setup = new Setup(options.agentJar(), System.getProperty("java.class.path"),
        workerPgUrl + "&socketTimeout=30", maria.jdbcUrl() + "&socketTimeout=30000", http.url(), topology,
        coordinator, http.unfencedUrl(), kafka.bootstrapServers());
    for (int i = 1; i <= options.workers(); i++) {
      slots.add(add(new WorkerSlot("w" + i, setup, dataPaths.open(i, setup))));
    }
    slots.forEach(WorkerSlot::launch);
    slots.forEach(WorkerSlot::awaitStarted);
    WorkerSlot.Status first = awaitHolder();
    out.println(at() + " infrastructure up, " + (first == null ? "no holder yet" : first.worker() + " holds token "
        + first.token()));

    // A wiped etcd is another cluster (a new cluster id): the agent captures the application's jetcd lock there under
    // a new name (<name>-<hash>) whose fences an operator installs, which no run of the harness does.
    List<Fault> rotation = topology.work() == Topology.Work.JETCD && ROTATION.size() > 1
        ? ROTATION.stream().filter(f -> f != Fault.ETCD_WIPE).toList() : ROTATION;
    Map<Fault, Integer> counts = new EnumMap<>(Fault.class);
    int done = 0;
    for (int trial = 1; trial <= options.trials(); trial++) {
      Fault fault = rotation.get((trial - 1) % rotation.size());
      sleep(200 + random.nextInt(300));
      long t0 = System.currentTimeMillis();
      String what;
      try {
        what = inject(fault);
      } catch (RuntimeException e) {
        // The harness itself failed (not the system under test): stop injecting, but still check the history so far.
        String line = at() + " trial " + trial + "/" + options.trials() + " " + label(fault) + ": HARNESS ERROR " + e;
        out.println(line);
        trialLog.add(line);
        notes.add("harness: trial " + trial + " (" + label(fault) + ") failed to run: " + e + "; trials stopped");
        break;
      }
      done = trial;
      WorkerSlot.Status holder = awaitHolder();
      long recovered = System.currentTimeMillis() - t0;
      counts.merge(fault, 1, Integer::sum);
      if (holder != null) {
        recovery.computeIfAbsent(fault, f -> new ArrayList<>()).add(recovered);
      }
      String line = String.format("%s trial %d/%d %-12s %s; then %s", at(), trial, options.trials(), label(fault),
          what, holder == null ? "NO HOLDER within " + HOLDER_TIMEOUT.toSeconds() + " s"
              : holder.worker() + " holds token " + holder.token() + " (" + recovered + " ms after the fault began)");
      out.println(line);
      trialLog.add(line);
      if (holder == null) {
        notes.add("liveness: no holder within " + HOLDER_TIMEOUT.toSeconds() + " s after trial " + trial + " ("
            + label(fault) + ")");
      }
      sleep(300);
      sampleBouncer();
    }
    return finish(counts, done);
  }

  /**
   * The faults on the data path (delay, data-partition) hold the bytes of a worker's own proxies: a worker whose
   * writes reached a resource some other way would make them no-ops that still count as trials. Every resource that
   * acknowledged a write of this worker must have seen bytes through its proxy; if not, the run fails as a harness
   * error (the URLs the worker was given bypass its data path).
   */
  private void checkDataPath(WorkerSlot slot) {
    Map<String, Long> forwarded = slot.dataPath().forwarded();
    out.println("data path of " + slot.name() + ": " + forwarded.entrySet().stream()
        .map(e -> e.getKey() + " " + e.getValue() + " bytes").collect(Collectors.joining(", ")));
    java.util.Set<String> acknowledged = slot.attempts().stream().filter(a -> a.outcome() == History.Outcome.ACKED)
        .map(Attempt::channel).filter(History.RESOURCES::contains).collect(Collectors.toCollection(java.util.TreeSet::new));
    for (String resource : acknowledged) {
      if (forwarded.getOrDefault(resource, 0L) == 0) {
        notes.add("harness: " + slot.name() + "'s writes to " + resource + " were acknowledged, but its proxy to "
            + resource + " forwarded no byte: the worker bypassed its data path, so delay and data-partition faults"
            + " could not reach its writes");
      }
    }
  }

  /** The fault's name on this run's coordinator ({@code zk-restart} for {@code etcd-restart} on ZooKeeper). */
  private String label(Fault fault) {
    return topology.label(fault.label);
  }

  /** The lock whose holder a pause or partition hits: the only one, or one drawn from the seed. */
  private String targetLock() {
    List<String> locks = topology.lockNames();
    return locks.size() == 1 ? locks.get(0) : locks.get(random.nextInt(locks.size()));
  }

  private String inject(Fault fault) {
    long ttl = topology.ttlMs();
    switch (fault) {
      case PAUSE -> {
        WorkerSlot.Status h = awaitHolder(HOLDER_TIMEOUT, 0, targetLock());
        if (h == null) {
          return "no holder to freeze";
        }
        WorkerSlot slot = slotOf(h);
        sleep(random.nextInt(150));
        long pause = ttl + 300 + random.nextInt(1_200);
        long at = System.currentTimeMillis();
        slot.current().jvm().suspend();
        sleep(pause);
        slot.current().jvm().resume();
        freezes.add(new long[] {at, pause});
        frozenWorkers.add(h.worker());
        return "froze " + h.worker() + " (token " + h.token() + ") for " + pause + " ms";
      }
      case PARTITION -> {
        WorkerSlot.Status h = awaitHolder(HOLDER_TIMEOUT, 0, targetLock());
        if (h == null) {
          return "no holder to partition";
        }
        WorkerSlot slot = slotOf(h);
        long cut = ttl + 500 + random.nextInt(1_500);
        slot.proxies().forEach(TcpProxy::partition);
        sleep(cut);
        slot.proxies().forEach(TcpProxy::heal);
        return "cut " + h.worker() + " (token " + h.token() + ") off " + topology.coordinator().label + " for " + cut
            + " ms";
      }
      case LEADER_KILL -> {
        return coordinator.killLeader(random);
      }
      case ETCD_RESTART -> {
        return coordinator.restartAll(random);
      }
      case ETCD_WIPE -> {
        return wipe();
      }
      default -> {
        return fault.kind.inject(this);
      }
    }
  }

  /**
   * Coordinator data loss and the runbook's remedy. The running agents meet the new cluster (they knew a higher
   * token and another cluster id: token reuse, they must block). On every tenth wipe (the first included), fresh
   * workers that know nothing are then started against it: they get low tokens, which the fences, keeping the
   * highest token they accepted, must reject. Then etcd's revision is bumped above every token issued, and every
   * lease is revoked until a valid holder appears: an agent that holds a reused grant (or waits with a key created
   * before the bump) campaigns again and gets a token above every one issued. That is the runbook's "let the holder
   * acquire the lock again" without restarting the JVMs.
   */
  private String wipe() {
    boolean freshPhase = wipes++ % 10 == 0;
    long before = coordinator.revision();
    wipeTimes.add(System.currentTimeMillis());
    coordinator.wipeAndRestart();
    sleep(2_000);
    List<String> reused = slots.stream().flatMap(s -> s.statuses().values().stream()).filter(s -> s.reused())
        .map(s -> s.worker() + "@" + s.token()).toList();
    String fresh = "";
    if (freshPhase) {
      restartWorkers();
      sleep(1_500);
      fresh = "; fresh workers' holder " + slots.stream().map(WorkerSlot::status)
          .filter(s -> "HOLDING".equals(s.state())).map(s -> s.worker() + "@" + s.token()).findFirst()
          .orElse("none");
    }
    long after = coordinator.bumpAbove(before);
    int rounds = 0;
    // A holder below the bump (a fresh agent's low token) is no holder: every write of it is rejected.
    while (rounds < 8 && awaitHolder(Duration.ofMillis(rounds == 0 ? 0 : 3_000), before) == null) {
      coordinator.revokeAll();
      rounds++;
    }
    return "wiped " + topology.coordinator().label + " at revision " + before + "; reuse detected by "
        + (reused.isEmpty() ? "none" : reused) + fresh + "; revision bumped to " + after + ", "
        + (topology.coordinator() == Topology.Coordinator.ETCD ? "leases revoked " + rounds + "x"
            : "waited " + rounds + "x");
  }

  private void restartWorkers() {
    slots.forEach(WorkerSlot::requestStop);
    slots.forEach(slot -> slot.retire(outDir));
    slots.forEach(WorkerSlot::launch);
    slots.forEach(WorkerSlot::awaitStarted);
  }

  private Outcome finish(Map<Fault, Integer> counts, int trials) {
    sampleBouncer();
    slots.forEach(WorkerSlot::requestStop);
    slots.forEach(slot -> slot.retire(outDir));
    List<TopicPartition> partitions = new ArrayList<>(sink.mainPartitions());
    partitions.add(sink.deadLetterPartition());
    partitions.add(sink.unfencedPartition());
    Map<TopicPartition, Long> ends = endOffsets(partitions);
    if (!sink.awaitCaughtUp(ends, Duration.ofSeconds(60))) {
      notes.add("the Kafka consumer did not reach the end of the topics " + ends + " within 60 s");
    }
    List<Attempt> attempts = new ArrayList<>();
    Map<String, History.AgentMetrics> metrics = new HashMap<>();
    Map<String, java.util.Set<Long>> grants = new HashMap<>();
    for (WorkerSlot slot : slots) {
      attempts.addAll(slot.attempts());
      metrics.putAll(slot.metrics());
      grants.putAll(slot.grants());
      checkDataPath(slot);
    }
    List<Accepted> accepted = new ArrayList<>();
    for (int i = 1; i <= topology.locks(); i++) {
      String lock = topology.lockNames().get(i - 1);
      accepted.addAll(readAccepted("pg", lock, postgres.jdbcUrl(), "SELECT id, write_id, token,"
          + " (extract(epoch FROM accepted_at) * 1000)::bigint FROM " + topology.table("pg_write", i) + " ORDER BY id"));
      accepted.addAll(readAccepted("mariadb", lock, maria.jdbcUrl(), "SELECT id, write_id, token,"
          + " CAST(UNIX_TIMESTAMP(accepted_at) * 1000 AS SIGNED) FROM " + topology.table("maria_write", i)
          + " ORDER BY id"));
    }
    accepted.addAll(http.accepted());
    accepted.addAll(sink.accepted());
    List<Accepted> unfenced = new ArrayList<>(readAccepted("pg-unfenced", LOCK, postgres.jdbcUrl(), "SELECT arrival,"
        + " write_id, coalesce(token, 0), (extract(epoch FROM accepted_at) * 1000)::bigint FROM pg_unfenced WHERE"
        + " arrival IS NOT NULL ORDER BY arrival"));
    unfenced.addAll(http.unfencedArrivals());
    unfenced.addAll(sink.unfencedArrivals());
    History history = new History(trials, attempts, accepted, sink.quarantined(), metrics,
        Map.of("http", http.fenceRejections(), "kafka", sink.fenceRejections()), pgCounter(), grants, unfenced,
        List.copyOf(wipeTimes));
    HistoryChecker.Result checked = HistoryChecker.check(history);
    DelayedWrites.Verdict delayed = DelayedWrites.check(holds, history);
    List<String> violations = new ArrayList<>(delayed.violations());
    violations.addAll(faultViolations);
    HistoryChecker.Result result = checked.with(violations);
    HistoryFiles.write(outDir, history, trialLog, result.violations());
    PoolerReport pooler = poolerReport();

    out.println();
    out.println("faults: " + counts.entrySet().stream().map(e -> label(e.getKey()) + "=" + e.getValue())
        .collect(Collectors.joining(" ")));
    out.println("time from the fault's start to a valid holder (mean / max): " + recovery.entrySet().stream()
        .map(e -> label(e.getKey()) + " " + seconds(e.getValue().stream().mapToLong(Long::longValue).average()
            .orElse(0)) + " / " + seconds(e.getValue().stream().mapToLong(Long::longValue).max().orElse(0)))
        .collect(Collectors.joining(", ")));
    out.println("freezes that landed while the frozen worker had a call in flight: " + midCallFreezes(attempts)
        + " of " + freezes.size());
    out.println("attempts: " + attempts.size() + ", accepted per resource: " + accepted.stream()
        .collect(Collectors.groupingBy(Accepted::resource, java.util.TreeMap::new, Collectors.counting()))
        + ", arrived per unfenced destination: " + unfenced.stream()
        .collect(Collectors.groupingBy(Accepted::resource, java.util.TreeMap::new, Collectors.counting())));
    if (pooler != null) {
      out.println(pooler.describe());
    }
    if (!holds.isEmpty()) {
      out.println(delayed.describe());
    }
    notes.forEach(n -> out.println("note: " + n));
    result.violations().stream().limit(40).forEach(v -> out.println("VIOLATION " + v));
    if (result.violations().size() > 40) {
      out.println("... " + (result.violations().size() - 40) + " more violations in " + outDir.resolve(
          "violations.txt"));
    }
    out.println("history, worker logs: " + outDir + " (seed=" + options.seed() + ", "
        + (System.currentTimeMillis() - started) / 1000 + " s)");
    String summary = result.summary() + (options.pooler() ? " " + options.poolerLabel() : "") + topology.suffix();
    out.println(summary);
    List<Accepted> streams = new ArrayList<>(accepted);
    streams.addAll(unfenced);
    return new Outcome(result, counts, List.copyOf(notes), outDir, summary, pooler, streams.stream()
        .collect(Collectors.groupingBy(Accepted::stream, java.util.TreeMap::new, Collectors.counting())));
  }

  /** How many freezes caught the frozen worker between an ATTEMPT line and its OUTCOME. */
  private long midCallFreezes(List<Attempt> attempts) {
    long n = 0;
    for (int i = 0; i < freezes.size(); i++) {
      long at = freezes.get(i)[0];
      String worker = frozenWorkers.get(i);
      boolean inFlight = attempts.stream().anyMatch(a -> a.worker().equals(worker) && a.startMs() <= at
          && (a.endMs() > at || a.endMs() < 0));
      n += inFlight ? 1 : 0;
    }
    return n;
  }

  private WorkerSlot.Status awaitHolder() {
    return awaitHolder(HOLDER_TIMEOUT, 0);
  }

  /**
   * The valid holder (HOLDING, no reuse, token above {@code minToken}) with the highest token, polled until
   * {@code timeout}; null if none.
   */
  private WorkerSlot.Status awaitHolder(Duration timeout, long minToken) {
    return awaitHolder(timeout, minToken, topology.lockNames().get(0));
  }

  /**
   * Polled until {@code timeout}: once every lock has a valid holder (HOLDING, no reuse, token above
   * {@code minToken}), the one of {@code lock} with the highest token; null if some lock has none by then.
   */
  private WorkerSlot.Status awaitHolder(Duration timeout, long minToken, String lock) {
    return awaitHolder(timeout, l -> minToken, lock);
  }

  /** As above, with each lock's own bar: a valid holder of lock {@code l} has a token above {@code minToken(l)}. */
  private WorkerSlot.Status awaitHolder(Duration timeout, ToLongFunction<String> minToken, String lock) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Map<String, WorkerSlot.Status> best = validHolders(slots.stream().map(WorkerSlot::statuses).toList(), minToken);
      if (best.size() == topology.locks() || System.nanoTime() >= deadline) {
        return best.size() == topology.locks() ? best.get(lock) : null;
      }
      sleep(50);
    }
  }

  /**
   * Of the workers' statuses (each worker's per lock), the valid holder (HOLDING, no reuse, token above
   * {@code minToken} of its lock) with the highest token, per lock; a lock with none is absent.
   */
  static Map<String, WorkerSlot.Status> validHolders(List<Map<String, WorkerSlot.Status>> workers,
      ToLongFunction<String> minToken) {
    Map<String, WorkerSlot.Status> best = new HashMap<>();
    for (Map<String, WorkerSlot.Status> statuses : workers) {
      statuses.forEach((l, s) -> {
        if (s.holding() && s.token() > minToken.applyAsLong(l) && (!best.containsKey(l)
            || s.token() > best.get(l).token())) {
          best.put(l, s);
        }
      });
    }
    return best;
  }

  private WorkerSlot slotOf(WorkerSlot.Status status) {
    return slots.stream().filter(s -> s.current().name().equals(status.worker())).findFirst().orElseThrow();
  }

  private void startInfrastructure() {
    dataPaths = add(new DataPath.Plan(options.workers()));
    CompletableFuture<KafkaBroker> k = CompletableFuture.supplyAsync(() -> add(KafkaBroker.start(
        dataPaths.brokerProperties())));
    CompletableFuture<PostgresServer> pg = CompletableFuture.supplyAsync(() -> add(PostgresServer.start()));
    CompletableFuture<MariaDbServer> m = CompletableFuture.supplyAsync(() -> add(MariaDbServer.start()));
    coordinator = add(FaultCoordinator.start(topology.coordinator()));
    postgres = pg.join();
    if (options.pooler()) {
      // Over PostgreSQL's Unix socket, as when both run on one host: PostgreSQL sees no port the agent could read.
      bouncer = add(PgBouncer.start(postgres, "transaction", PgBouncer.Backend.UNIX_SOCKET, options.poolSize(),
          postgres.user()));
      add(startBouncerSampler());
    }
    maria = m.join();
    kafka = k.join();
    prepareDatabases();
    kafka.createTopic(TOPIC, topology.partitions());
    kafka.createTopic(DEAD_LETTER_TOPIC, 1);
    kafka.createTopic(UNFENCED_TOPIC, 1);
    http = add(new HttpWriteServer(Ports.freePort(), topology.lockNames()));
    sink = add(new KafkaSink(kafka.bootstrapServers(), TOPIC, topology.partitions(), DEAD_LETTER_TOPIC,
        UNFENCED_TOPIC, topology.lockNames()));
  }

  /**
   * The tables and their fences, installed as a DBA would (table mode: every write of a stale token fails). Each
   * accepted row records the token its session carried and gets its id from a sequence after the fence's check
   * passed, under the fence's lock, so id order is the order the fence admitted the writes. With several locks
   * each lock has its own tables ({@code pg_total_<i>}, {@code pg_write_<i>}, {@code maria_write_<i>}), fenced by
   * it, and the view {@code pg_write_all} unites the pg rows for the pooler's report.
   */
  private void prepareDatabases() {
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement()) {
      // The server runs with synchronous_commit=off (fast tests); a crash (db-restart) would then lose commits it
      // had acknowledged. The run's database commits synchronously, as a production one does.
      s.execute("ALTER DATABASE postgres SET synchronous_commit = on");
      SqlFenceInstaller installer = new SqlFenceInstaller(c);
      List<String> all = new ArrayList<>();
      for (int i = 1; i <= topology.locks(); i++) {
        String lock = topology.lockNames().get(i - 1);
        String total = topology.table("pg_total", i);
        String write = topology.table("pg_write", i);
        all.add("SELECT backend, worker FROM " + write);
        s.execute("CREATE TABLE " + total + " (id int PRIMARY KEY, n bigint NOT NULL)");
        s.execute("INSERT INTO " + total + " VALUES (1, 0)");
        s.execute("CREATE TABLE " + write + " (id bigserial PRIMARY KEY, write_id text NOT NULL UNIQUE, worker text"
            + " NOT NULL, token bigint DEFAULT nullif(current_setting('" + SessionVariables.PG_TOKEN + "', true),"
            + " '')::bigint,"
            + " accepted_at timestamptz NOT NULL DEFAULT clock_timestamp(),"
            + " backend int NOT NULL DEFAULT pg_backend_pid())");
        installer.install(new SqlFence(TableName.parse(total), lock, false, false));
        installer.install(new SqlFence(TableName.parse(write), lock, false, false));
      }
      s.execute("CREATE VIEW pg_write_all AS " + String.join(" UNION ALL ", all));
      // The unfenced table: no fence trigger. Its arrival order is its commit order: a deferred constraint trigger
      // numbers each row when its transaction commits (an insert's id would order a transaction committed late by
      // when it began).
      s.execute("CREATE TABLE pg_unfenced (id bigserial PRIMARY KEY, write_id text NOT NULL UNIQUE, worker text NOT"
          + " NULL, token bigint DEFAULT nullif(current_setting('" + SessionVariables.PG_TOKEN + "', true), '')::bigint,"
          + " arrival bigint, accepted_at timestamptz NOT NULL DEFAULT clock_timestamp())");
      s.execute("CREATE SEQUENCE pg_unfenced_arrival");
      s.execute("CREATE FUNCTION pg_unfenced_arrived() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE pg_unfenced"
          + " SET arrival = nextval('pg_unfenced_arrival'), accepted_at = clock_timestamp() WHERE id = NEW.id;"
          + " RETURN NULL; END $$");
      s.execute("CREATE CONSTRAINT TRIGGER pg_unfenced_arrival AFTER INSERT ON pg_unfenced DEFERRABLE INITIALLY"
          + " DEFERRED FOR EACH ROW EXECUTE FUNCTION pg_unfenced_arrived()");
    } catch (SQLException e) {
      throw new IllegalStateException("cannot prepare PostgreSQL: " + e.getMessage(), e);
    }
    try (Connection c = DriverManager.getConnection(maria.jdbcUrl()); Statement s = c.createStatement()) {
      for (int i = 1; i <= topology.locks(); i++) {
        String write = topology.table("maria_write", i);
        s.execute("CREATE TABLE " + write + " (id bigint AUTO_INCREMENT PRIMARY KEY, write_id varchar(64) NOT NULL"
            + " UNIQUE, worker varchar(32) NOT NULL, token bigint NULL,"
            + " accepted_at DATETIME(6) NOT NULL DEFAULT NOW(6)) ENGINE=InnoDB");
        // MariaDB assigns the AUTO_INCREMENT value after the BEFORE triggers, the fence's included.
        s.execute("CREATE TRIGGER " + topology.table("faults_record_token", i) + " BEFORE INSERT ON " + write
            + " FOR EACH ROW SET NEW.token = CAST(" + SessionVariables.USER_TOKEN + " AS SIGNED)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(write), topology.lockNames().get(i - 1), false,
            false));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot prepare MariaDB: " + e.getMessage(), e);
    }
  }

  /** Null without the pooler. */
  private PoolerReport poolerReport() {
    if (bouncer == null) {
      return null;
    }
    long transactions = 0;
    long queries = 0;
    try {
      for (Map<String, String> row : bouncer.show("SHOW STATS")) {
        if ("postgres".equals(row.get("database"))) {
          transactions += Long.parseLong(row.get("total_xact_count"));
          queries += Long.parseLong(row.get("total_query_count"));
        }
      }
    } catch (RuntimeException e) {
      notes.add("cannot read PgBouncer's counters: " + e.getMessage());
    }
    long backends = 0;
    long shared = 0;
    int most = 0;
    long viaPooler = 0;
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT count(*), count(*) FILTER (WHERE n > 1), coalesce(max(n), 0) FROM"
            + " (SELECT backend, count(DISTINCT worker) AS n FROM pg_write_all GROUP BY backend) b")) {
      if (r.next()) {
        backends = r.getLong(1);
        shared = r.getLong(2);
        most = r.getInt(3);
      }
    } catch (SQLException e) {
      notes.add("cannot read pg_write's backends: " + e.getMessage());
    }
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT DISTINCT backend FROM pg_write_all")) {
      while (r.next()) {
        String backend = Integer.toString(r.getInt(1));
        synchronized (this) {
          viaPooler += bouncerBackends.contains(backend) ? 1 : 0;
        }
      }
    } catch (SQLException e) {
      notes.add("cannot read pg_write's backends: " + e.getMessage());
    }
    synchronized (this) {
      return new PoolerReport(bouncer.mode(), bouncer.poolSize(), transactions, queries, maxServers, maxClients,
          backends, viaPooler, shared, most);
    }
  }

  /**
   * Samples PgBouncer's connections every 200 ms while the run lasts, beside the sample after each trial: a server
   * connection can live and end within one trial (PostgreSQL ends the backend of a frozen holder's open transaction
   * after {@code idle_in_transaction_session_timeout}, which the agent sets to the TTL, and PgBouncer opens another),
   * and a backend that wrote rows must still be known as one of PgBouncer's. A failed background sample is not
   * noted (the admin console may be briefly busy); the per-trial samples note theirs.
   */
  private AutoCloseable startBouncerSampler() {
    java.util.concurrent.ScheduledExecutorService sampler =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "faults-pgbouncer-sampler");
          t.setDaemon(true);
          return t;
        });
    sampler.scheduleWithFixedDelay(() -> sampleBouncer(false), 200, 200, java.util.concurrent.TimeUnit.MILLISECONDS);
    return new AutoCloseable() {
      @Override
      public void close() throws InterruptedException {
        sampler.shutdownNow();
        sampler.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
      }

      @Override
      public String toString() {
        return "the PgBouncer sampler";
      }
    };
  }

  /** The most client and server connections PgBouncer had to database postgres, and its server backends' pids. */
  private void sampleBouncer() {
    sampleBouncer(true);
  }

  private synchronized void sampleBouncer(boolean noteFailure) {
    if (bouncer == null) {
      return;
    }
    try {
      List<Map<String, String>> servers = bouncer.show("SHOW SERVERS").stream()
          .filter(row -> "postgres".equals(row.get("database"))).toList();
      maxServers = Math.max(maxServers, servers.size());
      servers.forEach(row -> bouncerBackends.add(row.get("remote_pid")));
      maxClients = Math.max(maxClients, countRows("SHOW CLIENTS"));
    } catch (RuntimeException e) {
      if (noteFailure) {
        notes.add("cannot sample PgBouncer's connections: " + e.getMessage());
      }
    }
  }

  private int countRows(String show) {
    return (int) bouncer.show(show).stream().filter(row -> "postgres".equals(row.get("database"))).count();
  }

  private static List<Accepted> readAccepted(String resource, String lock, String url, String query) {
    List<Accepted> rows = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
        ResultSet r = s.executeQuery(query)) {
      while (r.next()) {
        rows.add(new Accepted(resource, r.getLong(1), r.getString(2), r.getLong(3), r.getLong(4), lock, -1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read " + resource + "'s accepted writes: " + e.getMessage(), e);
    }
    return rows;
  }

  /** The pg counters of all locks, summed (each counts its lock's accepted pg rows). */
  private long pgCounter() {
    List<String> counters = new ArrayList<>();
    for (int i = 1; i <= topology.locks(); i++) {
      counters.add("(SELECT n FROM " + topology.table("pg_total", i) + " WHERE id = 1)");
    }
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT " + String.join(" + ", counters))) {
      return r.next() ? r.getLong(1) : -1;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read the pg counter: " + e.getMessage(), e);
    }
  }

  private Map<TopicPartition, Long> endOffsets(List<TopicPartition> partitions) {
    try {
      Map<TopicPartition, OffsetSpec> request = new HashMap<>();
      partitions.forEach(p -> request.put(p, OffsetSpec.latest()));
      Map<TopicPartition, Long> ends = new HashMap<>();
      kafka.admin().listOffsets(request).all().get().forEach((p, info) -> ends.put(p, info.offset()));
      return ends;
    } catch (Exception e) {
      throw new IllegalStateException("cannot read the topics' end offsets: " + e, e);
    }
  }

  private static String seconds(double ms) {
    return String.format("%.1f s", ms / 1000);
  }

  private String at() {
    return String.format("%7.1fs", (System.currentTimeMillis() - started) / 1000.0);
  }

  private synchronized <T extends AutoCloseable> T add(T resource) {
    open.push(resource);
    return resource;
  }

  private void closeAll() {
    // The broker's log dir is deleted with it: keep its log beside the workers' (broker-kill is judged from it).
    if (kafka != null && outDir != null) {
      try {
        Files.copy(kafka.logFile(), outDir.resolve("kafka-broker.log"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      } catch (IOException e) {
        out.println("could not keep the Kafka broker's log: " + e);
      }
    }
    while (true) {
      AutoCloseable next;
      synchronized (this) {
        next = open.poll();
      }
      if (next == null) {
        return;
      }
      try {
        next.close();
      } catch (Exception | AssertionError e) {
        out.println("could not stop " + next + ": " + e);
      }
    }
  }

  @Override
  public long ttlMs() {
    return topology.ttlMs();
  }

  @Override
  public boolean agentsOwnLock() {
    return !topology.work().captured();
  }

  @Override
  public Random random() {
    return random;
  }

  @Override
  public WorkerSlot.Status holder() {
    return awaitHolder();
  }

  @Override
  public WorkerSlot.Status holder(Duration timeout, long aboveToken) {
    // The bar is the first lock's: with several locks, the others' tokens (one counter for all locks) can be lower
    // and stay so, which kept a delay waiting its whole 30 s for a "successor" of every lock.
    String first = topology.lockNames().get(0);
    return awaitHolder(timeout, l -> l.equals(first) ? aboveToken : 0, first);
  }

  @Override
  public WorkerSlot slot(WorkerSlot.Status status) {
    return slotOf(status);
  }

  @Override
  public List<WorkerSlot> slots() {
    return slots;
  }

  @Override
  public WorkerSlot skewable() {
    return slots.stream().filter(WorkerSlot::skewable).findFirst().orElseThrow();
  }

  @Override
  public PostgresServer postgres() {
    return postgres;
  }

  @Override
  public MariaDbServer maria() {
    return maria;
  }

  @Override
  public KafkaBroker kafka() {
    return kafka;
  }

  @Override
  public void held(DelayedWrites.Hold hold) {
    holds.add(hold);
  }

  @Override
  public void violation(String description) {
    faultViolations.add(description);
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
