package dev.fencing.faults;

import dev.fencing.faults.History.Accepted;
import dev.fencing.faults.History.Attempt;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.MariaDbServer;
import dev.fencing.testing.PostgresServer;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.common.TopicPartition;

/**
 * The fault harness ({@code scripts/faults.sh [trials]}): 2-3 agent-attached {@link FaultWorker}s contend for one
 * lock and write through fenced PostgreSQL, MariaDB, an HTTP fence and the Kafka consumer fence, while each trial
 * injects one fault ({@link FaultKind}, one class each), round-robin:
 * <ul>
 *   <li>{@code pause}: SIGSTOP of the holder past its TTL, at a random point of its loop (often mid-call)
 *       ({@link PauseFault});</li>
 *   <li>{@code partition}: the holder's TCP proxies to etcd blackhole past the TTL, then heal
 *       ({@link CoordinatorPartitionFault});</li>
 *   <li>{@code leader-kill}: SIGKILL of the etcd leader (3-node cluster), restarted a moment later
 *       ({@link LeaderKillFault});</li>
 *   <li>{@code etcd-restart}: every etcd node stopped, then started again ({@link CoordinatorRestartFault});</li>
 *   <li>{@code etcd-wipe}: coordinator data loss: a brand-new cluster on the same ports. The running agents meet it
 *       (token reuse: they must block); on every tenth wipe fresh workers are started against it (low tokens: the
 *       fences must reject); then the operator's remedy from the runbook: etcd's revision is bumped above every
 *       token issued and the holders made to acquire the lock again (leases revoked) ({@link CoordinatorWipeFault});
 *       </li>
 *   <li>at the resources and the clocks: {@code delay} ({@link DelayFault}), {@code data-partition},
 *       {@code db-restart}, {@code broker-kill}, {@code clock-jump}.</li>
 * </ul>
 * With {@code --coordinator=zookeeper} a 3-server ZooKeeper ensemble takes etcd's place and the same faults hit it
 * ({@link FaultCoordinator}), named {@code zk-restart} and {@code zk-wipe}; {@code --locks=N} and
 * {@code --partitions=N} shape the locks and the Kafka topic ({@link Topology}).
 * The {@link Infrastructure} and the workers live for the whole run; fresh workers only on every tenth wipe. At the
 * end the workers are drained and scraped, the resources read, and {@link HistoryChecker} judges the whole history; the last
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

  /**
   * The kinds of fault, injected round-robin. The two whose name says the coordinator are named for etcd here and in
   * RELIABILITY.md ({@code etcd-restart}, {@code etcd-wipe}), for ZooKeeper on its runs ({@link Topology#label}).
   */
  enum Fault {
    PAUSE("pause", PauseFault::new), PARTITION("partition", CoordinatorPartitionFault::new),
    LEADER_KILL("leader-kill", LeaderKillFault::new),
    COORDINATOR_RESTART("etcd-restart", CoordinatorRestartFault::new, "zk-restart", "coordinator-restart"),
    COORDINATOR_WIPE("etcd-wipe", CoordinatorWipeFault::new, "zk-wipe", "coordinator-wipe"),
    DELAY("delay", DelayFault::new), DATA_PARTITION("data-partition", DataPartitionFault::new),
    DB_RESTART("db-restart", DbRestartFault::new), BROKER_KILL("broker-kill", BrokerKillFault::new),
    CLOCK_JUMP("clock-jump", ClockJumpFault::new);

    final String label;
    /** A new instance for each run (a kind may keep count of its faults). */
    final Supplier<FaultKind> kind;
    /** Other names {@code -Dfencing.faults.kinds} accepts for it. */
    final List<String> aliases;

    /**
     * {@code -Dfencing.faults.kinds=delay,clock-jump}: only these kinds, round-robin (default: every kind). The
     * coordinator's restart and wipe go by either coordinator's name ({@code zk-restart} is {@code etcd-restart}).
     */
    static List<Fault> rotation(String labels) {
      if (labels == null || labels.isBlank()) {
        return List.of(values());
      }
      List<Fault> kinds = new ArrayList<>();
      for (String label : labels.split(",")) {
        kinds.add(Arrays.stream(values()).filter(f -> f.named(label.strip())).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("unknown fault kind '" + label + "' in -D" + KINDS
                + ", expected some of " + Arrays.stream(values()).map(f -> f.label).toList())));
      }
      return List.copyOf(kinds);
    }

    Fault(String label, Supplier<FaultKind> kind, String... aliases) {
      this.label = label;
      this.kind = kind;
      this.aliases = List.of(aliases);
    }

    private boolean named(String name) {
      return label.equals(name) || aliases.contains(name);
    }
  }

  /**
   * What a worker needs to know about the resources: their direct URLs, which its data path ({@link DataPath}) puts
   * its own proxies in front of.
   */
  record Setup(Path agentJar, String classpath, String pgUrl, String mariaUrl, String httpUrl, Topology topology,
      FaultCoordinator coordinator, String unfencedHttpUrl, String kafkaDirect, String outboxHttpUrl) {
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
        + " [--work=jvm|section|curator|jetcd|leader|outbox] [--db=postgresql|mariadb (with --work=outbox)]";
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
      if (topology.db() != Topology.Db.POSTGRESQL && topology.work() != Topology.Work.OUTBOX) {
        throw new IllegalArgumentException("--db=" + topology.db().label + " chooses the outbox's database: it goes"
            + " with --work=outbox (the other work modes write PostgreSQL and MariaDB both)\n" + USAGE);
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
   * The run's verdict, the counts per fault, where its history was written, the accepted writes per
   * {@link Accepted#stream()} (resource, lock, partition), and with {@code --work=outbox} the outbox's verdict (its
   * stale and lost events are in the run's too; null in the other modes) and how many relays were killed between
   * the receiver's effect and its answer.
   */
  public record Outcome(HistoryChecker.Result result, Map<Fault, Integer> faults, List<String> notes, Path outDir,
      String summary, PoolerReport pooler, Map<String, Long> acceptedPerStream, OutboxChecker.Result outbox,
      int relaysKilledMidDelivery) {
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

  /** A freeze of {@code worker} at {@code at} (epoch ms). */
  private record Freeze(String worker, long at) {
  }

  private final Options options;
  private final PrintStream out;
  private final Random random;
  private final long started = System.currentTimeMillis();
  private final List<String> notes = new ArrayList<>();
  private final List<String> trialLog = new ArrayList<>();
  private final List<Freeze> freezes = new ArrayList<>();
  private final Topology topology;
  private final Infrastructure infra;
  private final Map<Fault, FaultKind> kinds = new EnumMap<>(Fault.class);
  private final List<WorkerSlot> slots = new ArrayList<>();
  private Path outDir;
  /** When each wipe began (epoch ms): the unfenced destinations' holders are ordered within one history. */
  private final List<Long> wipeTimes = new ArrayList<>();
  private final Map<Fault, List<Long>> recovery = new EnumMap<>(Fault.class);
  private final List<DelayedWrites.Hold> holds = new ArrayList<>();
  private final List<String> faultViolations = new ArrayList<>();
  /** {@code --work=outbox}: the relays' kill after each trial (null otherwise). */
  private RelayKill relayKill;
  /** How long the final drain waits for the outbox's events to be delivered. */
  private static final Duration OUTBOX_DRAIN = Duration.ofSeconds(90);

  private FaultRun(Options options, PrintStream out) {
    this.options = options;
    this.out = out;
    this.random = new Random(options.seed());
    this.topology = options.topology();
    this.infra = new Infrastructure(topology, options.workers(), options.poolSize(), out);
    Stream.of(Fault.values()).forEach(f -> kinds.put(f, f.kind.get()));
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
      run.infra.close(run.outDir);
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
    infra.start(notes::add);
    Setup setup = infra.workerSetup(options.agentJar());
    if (topology.work() == Topology.Work.OUTBOX) {
      relayKill = new RelayKill(infra.startRelays(options.agentJar()), infra.outboxReceiver(), infra.outboxUrl(),
          random);
    }
    for (int i = 1; i <= options.workers(); i++) {
      slots.add(infra.add(new WorkerSlot("w" + i, setup, infra.dataPaths().open(i, setup))));
    }
    slots.forEach(WorkerSlot::launch);
    slots.forEach(WorkerSlot::awaitStarted);
    WorkerSlot.Status first = awaitHolder();
    out.println(at() + " infrastructure up, " + (first == null ? "no holder yet" : first.worker() + " holds token "
        + first.token()));

    // A wiped etcd is another cluster (a new cluster id): the agent captures the application's jetcd lock there under
    // a new name (<name>-<hash>) whose fences an operator installs, which no run of the harness does.
    List<Fault> rotation = topology.work() == Topology.Work.JETCD && ROTATION.size() > 1
        ? ROTATION.stream().filter(f -> f != Fault.COORDINATOR_WIPE).toList() : ROTATION;
    Map<Fault, Integer> counts = new EnumMap<>(Fault.class);
    int done = 0;
    for (int trial = 1; trial <= options.trials(); trial++) {
      Fault fault = rotation.get((trial - 1) % rotation.size());
      sleep(200 + random.nextInt(300));
      long t0 = System.currentTimeMillis();
      String what;
      try {
        what = kinds.get(fault).inject(this);
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
      String relay = "";
      if (relayKill != null) {
        try {
          relay = "; " + relayKill.inject();
        } catch (RuntimeException | AssertionError e) {
          notes.add("harness: trial " + trial + ": the relay kill failed: " + e + "; trials stopped");
          break;
        }
      }
      String line = String.format("%s trial %d/%d %-12s %s; then %s%s", at(), trial, options.trials(), label(fault),
          what, holder == null ? "NO HOLDER within " + HOLDER_TIMEOUT.toSeconds() + " s"
              : holder.worker() + " holds token " + holder.token() + " (" + recovered + " ms after the fault began)",
          relay);
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

  @Override
  public void restartWorkers() {
    slots.forEach(WorkerSlot::requestStop);
    slots.forEach(slot -> slot.retire(outDir));
    slots.forEach(WorkerSlot::launch);
    slots.forEach(WorkerSlot::awaitStarted);
  }

  private Outcome finish(Map<Fault, Integer> counts, int trials) {
    sampleBouncer();
    KafkaSink sink = infra.sink();
    HttpWriteServer http = infra.http();
    slots.forEach(WorkerSlot::requestStop);
    slots.forEach(slot -> slot.retire(outDir));
    List<TopicPartition> partitions = new ArrayList<>(sink.mainPartitions());
    partitions.add(sink.deadLetterPartition());
    partitions.add(sink.unfencedPartition());
    Map<TopicPartition, Long> ends = infra.endOffsets(partitions);
    if (!sink.awaitCaughtUp(ends, Duration.ofSeconds(60))) {
      notes.add("the Kafka consumer did not reach the end of the topics " + ends + " within 60 s");
    }
    if (relayKill != null) {
      drainOutbox();
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
    List<Accepted> accepted = new ArrayList<>(infra.acceptedByTheDatabases());
    accepted.addAll(http.accepted());
    accepted.addAll(sink.accepted());
    List<Accepted> unfenced = new ArrayList<>(infra.pgUnfencedArrivals());
    unfenced.addAll(http.unfencedArrivals());
    unfenced.addAll(sink.unfencedArrivals());
    History history = new History(trials, attempts, accepted, sink.quarantined(), metrics,
        Map.of("http", http.fenceRejections(), "kafka", sink.fenceRejections()), infra.pgCounter(), grants, unfenced,
        List.copyOf(wipeTimes));
    HistoryChecker.Result checked = HistoryChecker.check(history);
    DelayedWrites.Verdict delayed = DelayedWrites.check(holds, history);
    List<String> violations = new ArrayList<>(delayed.violations());
    violations.addAll(faultViolations);
    HistoryChecker.Result result = checked.with(violations);
    OutboxChecker.Result outbox = null;
    if (relayKill != null) {
      OutboxReceiver receiver = infra.outboxReceiver();
      String resource = topology.db().resource;
      outbox = OutboxChecker.check(infra.outboxEvents(), accepted.stream().filter(a -> a.resource().equals(resource))
          .toList(), receiver.deliveries(), receiver.applied(), attempts, resource);
      List<String> all = new ArrayList<>(result.violations());
      all.addAll(outbox.violations());
      result = new HistoryChecker.Result(result.trials(), result.staleAccepted() + outbox.stale(),
          result.lost() + outbox.lost(), result.blocked(), result.rejected(), result.unfencedStale(),
          result.unfencedWrites(), List.copyOf(all));
    }
    HistoryFiles.write(outDir, history, trialLog, result.violations());
    PoolerReport pooler = infra.pooler() == null ? null : infra.pooler().report();

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
    if (outbox != null) {
      out.println("outbox: " + outbox.events() + " events committed, " + outbox.deliveries() + " deliveries ("
          + outbox.duplicates() + " of an event already delivered), " + outbox.applied() + " applied; relays killed: "
          + infra.outboxRelays().kills() + ", " + relayKill.midDelivery() + " of them between the receiver's effect"
          + " and its answer");
    }
    notes.forEach(n -> out.println("note: " + n));
    result.violations().stream().limit(40).forEach(v -> out.println("VIOLATION " + v));
    if (result.violations().size() > 40) {
      out.println("... " + (result.violations().size() - 40) + " more violations in " + outDir.resolve(
          "violations.txt"));
    }
    out.println("history, worker logs: " + outDir + " (seed=" + options.seed() + ", "
        + (System.currentTimeMillis() - started) / 1000 + " s)");
    String summary = result.summary() + (options.pooler() ? " " + options.poolerLabel() : "") + topology.suffix()
        + (outbox == null ? "" : outbox.summary());
    out.println(summary);
    List<Accepted> streams = new ArrayList<>(accepted);
    streams.addAll(unfenced);
    return new Outcome(result, counts, List.copyOf(notes), outDir, summary, pooler, streams.stream()
        .collect(Collectors.groupingBy(Accepted::stream, java.util.TreeMap::new, Collectors.counting())), outbox,
        relayKill == null ? 0 : relayKill.midDelivery());
  }

  /**
   * {@code --work=outbox}, once the workers stopped: every relay running (one that exited by itself is noted and
   * started again), then waits until the outbox table has no undelivered event and the topic's consumer has applied
   * every record (an HTTP event is applied before its relay marks it delivered); the relays' logs are kept.
   */
  private void drainOutbox() {
    OutboxRelays relays = infra.outboxRelays();
    List<String> dead = relays.restartDead();
    if (!dead.isEmpty()) {
      notes.add("outbox relays that had exited by themselves (started again for the drain): " + dead);
    }
    long deadline = System.nanoTime() + OUTBOX_DRAIN.toNanos();
    long left;
    while ((left = infra.undeliveredEvents()) != 0 && System.nanoTime() < deadline) {
      sleep(200);
    }
    if (left != 0) {
      notes.add("the outbox still had " + left + " undelivered events " + OUTBOX_DRAIN.toSeconds()
          + " s after the workers stopped");
    }
    TopicPartition events = new TopicPartition(OutboxReceiver.TOPIC, 0);
    long end = infra.endOffsets(List.of(events)).get(events);
    if (!infra.outboxReceiver().awaitConsumed(end, Duration.ofSeconds(60))) {
      notes.add("the outbox topic's consumer did not apply its " + end + " records within 60 s");
    }
    relays.stop(outDir);
  }

  /** How many freezes caught the frozen worker between an ATTEMPT line and its OUTCOME. */
  private long midCallFreezes(List<Attempt> attempts) {
    long n = 0;
    for (Freeze freeze : freezes) {
      long at = freeze.at();
      String worker = freeze.worker();
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

  /** After each trial and at the end, with the pooler: its connections ({@link PoolerSampler}). */
  private void sampleBouncer() {
    if (infra.pooler() != null) {
      infra.pooler().sample();
    }
  }

  private static String seconds(double ms) {
    return String.format("%.1f s", ms / 1000);
  }

  private String at() {
    return String.format("%7.1fs", (System.currentTimeMillis() - started) / 1000.0);
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
  public WorkerSlot.Status targetHolder() {
    return awaitHolder(HOLDER_TIMEOUT, 0, targetLock());
  }

  @Override
  public WorkerSlot.Status holderOfEveryLock(Duration timeout, long aboveToken) {
    return awaitHolder(timeout, aboveToken);
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
    return infra.postgres();
  }

  @Override
  public MariaDbServer maria() {
    return infra.maria();
  }

  @Override
  public KafkaBroker kafka() {
    return infra.kafka();
  }

  @Override
  public FaultCoordinator coordinator() {
    return infra.coordinator();
  }

  @Override
  public Topology topology() {
    return topology;
  }

  @Override
  public void froze(String worker, long atMs) {
    freezes.add(new Freeze(worker, atMs));
  }

  @Override
  public void wipeBegins(long atMs) {
    wipeTimes.add(atMs);
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
