package dev.fencing.faults;

import java.util.List;
import java.util.stream.IntStream;

/**
 * The shape of a fault run beyond its faults: which coordinator issues the tokens, how many locks the workers hold,
 * how many partitions the Kafka topic has, how the workers' writes meet their lock, and which database holds the
 * outbox ({@code --coordinator=etcd|zookeeper}, {@code --locks=N}, {@code --partitions=N}, {@code --work=...},
 * {@link Work}, {@code --db=postgresql|mariadb}, {@link Db}).
 *
 * <p>One lock (the default) is the JVM-wide lock {@value History#LOCK} ({@code fencing.lock}); with several, each
 * worker holds {@code faults-1} ... {@code faults-N} through declared sections ({@code fencing.sections}, one method
 * of {@link FaultSections} per lock), each lock with its own tables, and the HTTP and Kafka fences judge every lock
 * on its own.
 */
public record Topology(Coordinator coordinator, int locks, int partitions, Work work, Db db) {
  /** The most locks a run can have: one section method of {@link FaultSections} each. */
  public static final int MAX_LOCKS = FaultSections.COUNT;
  /** Partitions of the Kafka topic unless told: the checker judges each partition's offset order. */
  public static final int DEFAULT_PARTITIONS = 3;

  /** Where the tokens come from. */
  public enum Coordinator {
    ETCD("etcd"), ZOOKEEPER("zookeeper");

    final String label;

    Coordinator(String label) {
      this.label = label;
    }

    static Coordinator parse(String value) {
      for (Coordinator c : values()) {
        if (c.label.equals(value)) {
          return c;
        }
      }
      throw new IllegalArgumentException("--coordinator must be etcd or zookeeper, not '" + value + "'");
    }
  }

  /**
   * How the workers' writes meet their lock ({@code --work=}): {@code jvm}, the agent's JVM-wide lock
   * ({@code fencing.lock}; sections with several locks); {@code section}, a declared section whose JDBC transactions
   * commit after it returned; {@code curator}, an {@code InterProcessMutex} the worker takes itself (ZooKeeper);
   * {@code jetcd}, a jetcd {@code Lock} on a lease the worker keeps alive (etcd); {@code leader}, a Curator
   * {@code LeaderSelector} whose {@code takeLeadership} starts a scheduler that writes (ZooKeeper). The last three
   * are the application's own locks, which the agent captures (no {@code fencing.lock}). {@code outbox}: the JVM-wide
   * lock, and each {@code pg} transaction also writes two events into the tokened outbox table, which standalone
   * relays deliver to an unfenced HTTP receiver and an unfenced topic ({@link OutboxReceiver}).
   */
  public enum Work {
    JVM("jvm", null), SECTION("section", null), CURATOR("curator", Coordinator.ZOOKEEPER),
    JETCD("jetcd", Coordinator.ETCD), LEADER("leader", Coordinator.ZOOKEEPER), OUTBOX("outbox", null);

    final String label;
    /** The coordinator the application's own lock lives in (null: either). */
    final Coordinator needs;

    Work(String label, Coordinator needs) {
      this.label = label;
      this.needs = needs;
    }

    /** The application's own lock, captured by the agent (its state is /status captured[]). */
    public boolean captured() {
      return this == CURATOR || this == JETCD || this == LEADER;
    }

    static Work parse(String value) {
      for (Work w : values()) {
        if (w.label.equals(value)) {
          return w;
        }
      }
      throw new IllegalArgumentException("--work must be jvm, section, curator, jetcd, leader or outbox, not '" + value
          + "'");
    }
  }

  /**
   * Where {@code --work=outbox} writes its events ({@code --db=}): {@code postgresql}, in the {@code pg} transaction
   * beside its business rows; {@code mariadb}, in the {@code mariadb} write, then one transaction of its business row
   * and the events. The other work modes write both databases and take no {@code --db}.
   */
  public enum Db {
    POSTGRESQL("postgresql", "pg"), MARIADB("mariadb", "mariadb");

    final String label;
    /** The resource of the workers' attempts and the checker's accepted rows in that database. */
    final String resource;

    Db(String label, String resource) {
      this.label = label;
      this.resource = resource;
    }

    static Db parse(String value) {
      for (Db d : values()) {
        if (d.label.equals(value)) {
          return d;
        }
      }
      throw new IllegalArgumentException("--db must be postgresql or mariadb, not '" + value + "'");
    }
  }

  public static final Topology DEFAULT = new Topology(Coordinator.ETCD, 1, DEFAULT_PARTITIONS);

  /** The workers' writes under the agent's JVM-wide lock (several locks: sections). */
  public Topology(Coordinator coordinator, int locks, int partitions) {
    this(coordinator, locks, partitions, Work.JVM);
  }

  /** The outbox, if any, on PostgreSQL. */
  public Topology(Coordinator coordinator, int locks, int partitions, Work work) {
    this(coordinator, locks, partitions, work, Db.POSTGRESQL);
  }

  public Topology {
    if (work != Work.JVM && locks != 1) {
      throw new IllegalArgumentException("--work=" + work.label + " runs one lock, not --locks=" + locks);
    }
    if (work.needs != null && work.needs != coordinator) {
      throw new IllegalArgumentException("--work=" + work.label + " takes its lock in " + work.needs.label
          + ", not --coordinator=" + coordinator.label);
    }
    if (locks < 1 || locks > MAX_LOCKS) {
      throw new IllegalArgumentException("--locks must be 1 to " + MAX_LOCKS + ", not " + locks);
    }
    if (partitions < 1 || partitions > 64) {
      throw new IllegalArgumentException("--partitions must be 1 to 64, not " + partitions);
    }
  }

  /**
   * {@code t} with one command-line argument applied; null if it is none of this record's ({@code --coordinator=},
   * {@code --locks=}, {@code --partitions=}, {@code --work=}, {@code --db=}).
   */
  static Topology apply(Topology t, String arg) {
    if (arg.startsWith("--coordinator=")) {
      return new Topology(Coordinator.parse(arg.substring(14)), t.locks, t.partitions, t.work, t.db);
    }
    if (arg.startsWith("--locks=")) {
      return new Topology(t.coordinator, number("--locks", arg.substring(8)), t.partitions, t.work, t.db);
    }
    if (arg.startsWith("--partitions=")) {
      return new Topology(t.coordinator, t.locks, number("--partitions", arg.substring(13)), t.work, t.db);
    }
    if (arg.startsWith("--work=")) {
      Work work = Work.parse(arg.substring(7));
      // The lock's library decides the coordinator (--work=curator runs on ZooKeeper unless told otherwise, which
      // the constructor refuses).
      Coordinator c = work.needs != null && t.coordinator == Coordinator.ETCD ? work.needs : t.coordinator;
      return new Topology(c, t.locks, t.partitions, work, t.db);
    }
    if (arg.startsWith("--db=")) {
      return new Topology(t.coordinator, t.locks, t.partitions, t.work, Db.parse(arg.substring(5)));
    }
    return null;
  }

  private static int number(String option, String value) {
    if (!value.matches("\\d{1,3}")) {
      throw new IllegalArgumentException(option + "=N needs a whole number, not '" + value + "'");
    }
    return Integer.parseInt(value);
  }

  /** Declared sections: one per lock with several locks, the one lock's with {@code --work=section}. */
  public boolean sections() {
    return locks > 1 || work == Work.SECTION;
  }

  /** The locks' names: {@value History#LOCK}, or {@code faults-1} ... {@code faults-N}. */
  public List<String> lockNames() {
    return locks == 1 ? List.of(History.LOCK)
        : IntStream.rangeClosed(1, locks).mapToObj(i -> History.LOCK + "-" + i).toList();
  }

  /** A table of lock number {@code i} (1-based): the base name with one lock, {@code <base>_<i>} with several. */
  public String table(String base, int i) {
    return locks == 1 ? base : base + "_" + i;
  }

  /**
   * The lease TTL the workers ask for: 2 s; 3 s on ZooKeeper, whose session timeout must leave two thirds of it
   * minus the margin for a leader election (docs/reference/coordinators.md).
   */
  public long ttlMs() {
    return coordinator == Coordinator.ZOOKEEPER ? 3_000 : 2_000;
  }

  /** A fault label for this coordinator: {@code etcd-restart} becomes {@code zk-restart} on ZooKeeper. */
  public String label(String faultLabel) {
    return coordinator == Coordinator.ZOOKEEPER ? faultLabel.replace("etcd-", "zk-") : faultLabel;
  }

  /** What the summary line says beyond the defaults (empty for etcd, one lock, 3 partitions). */
  public String suffix() {
    StringBuilder s = new StringBuilder();
    if (coordinator != Coordinator.ETCD) {
      s.append(" coordinator=").append(coordinator.label);
    }
    if (locks != 1) {
      s.append(" locks=").append(locks);
    }
    if (partitions != DEFAULT_PARTITIONS) {
      s.append(" partitions=").append(partitions);
    }
    if (work != Work.JVM) {
      s.append(" work=").append(work.label);
    }
    if (db != Db.POSTGRESQL) {
      s.append(" db=").append(db.label);
    }
    return s.toString();
  }

  public String describe() {
    return "coordinator " + coordinator.label + ", " + locks + (locks == 1 ? " lock" : " locks (sections)") + ", "
        + partitions + " Kafka partition" + (partitions == 1 ? "" : "s") + ", work " + work.label
        + (db == Db.POSTGRESQL ? "" : ", outbox on " + db.label);
  }
}
