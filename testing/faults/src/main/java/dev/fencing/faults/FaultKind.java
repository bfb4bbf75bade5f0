package dev.fencing.faults;

import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.MariaDbServer;
import dev.fencing.testing.PostgresServer;
import java.time.Duration;
import java.util.Random;

/**
 * A kind of fault ({@link FaultRun.Fault}): at the workers, the coordinator, the resources or the clocks. A run has
 * an instance of each. Its random parameters come from the run's seeded {@link Random}.
 */
interface FaultKind {

  /** Injects one fault, heals it, and returns what it did (for the trial's line). */
  String inject(Trial trial);

  /** What a fault sees of the run. */
  interface Trial {
    /** The workers' lease TTL. */
    long ttlMs();

    /** The run's seeded source of the fault's parameters. */
    Random random();

    /** The valid holder with the highest token, waited for (30 s); null if none. */
    WorkerSlot.Status holder();

    /**
     * The valid holder of the lock a pause or partition hits (the only one, or one drawn from the seed), waited for
     * (30 s); null if none.
     */
    WorkerSlot.Status targetHolder();

    /**
     * The valid holder of the first lock with a token above {@code aboveToken} (the others' with any valid holder),
     * waited for up to {@code timeout}; null if none.
     */
    WorkerSlot.Status holder(Duration timeout, long aboveToken);

    /**
     * Once every lock has a valid holder with a token above {@code aboveToken}, the first lock's, waited for up to
     * {@code timeout}; null if some lock has none by then.
     */
    WorkerSlot.Status holderOfEveryLock(Duration timeout, long aboveToken);

    /** Every worker slot. */
    java.util.List<WorkerSlot> slots();

    /** The worker whose wall clock can be skewed ({@link WorkerSlot#skewable()}). */
    WorkerSlot skewable();

    /** The worker slot whose current incarnation reported {@code status}. */
    WorkerSlot slot(WorkerSlot.Status status);

    PostgresServer postgres();

    MariaDbServer maria();

    KafkaBroker kafka();

    FaultCoordinator coordinator();

    /** The run's coordinator, locks, partitions and work mode. */
    Topology topology();

    /** Records that {@code worker} was frozen at {@code atMs} (epoch ms), for the freezes that landed mid-call. */
    void froze(String worker, long atMs);

    /** Records that a wipe of the coordinator begins at {@code atMs} (epoch ms): it separates the unfenced holders. */
    void wipeBegins(long atMs);

    /** Ends every worker's incarnation and starts a fresh one (which remembers nothing). */
    void restartWorkers();

    /** Records that the bytes of a worker's writes to a resource were held, for {@link DelayedWrites}. */
    void held(DelayedWrites.Hold hold);

    /**
     * Whether the lock is the agent's own (its lease timed on the monotonic clock); a captured lock's liveness is its
     * application client's, which may read the wall clock itself.
     */
    boolean agentsOwnLock();

    /** A promise broken that the history cannot show (the agent's decision changed under a clock jump). */
    void violation(String description);
  }

  static void sleep(long ms) {
    FaultRun.sleep(ms);
  }

  /** One of the resources, at random. */
  static String anyResource(Random random) {
    return History.RESOURCES.get(random.nextInt(History.RESOURCES.size()));
  }
}
