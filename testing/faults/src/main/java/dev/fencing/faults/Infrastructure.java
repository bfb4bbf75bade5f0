package dev.fencing.faults;

import dev.fencing.faults.History.Accepted;
import dev.fencing.fence.sql.OutboxInstaller;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.SqlOutbox;
import dev.fencing.fence.sql.TableName;
import dev.fencing.protocol.SessionVariables;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.MariaDbServer;
import dev.fencing.testing.PgBouncer;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * What a fault run writes to and is coordinated by, for the whole run: the coordinator, PostgreSQL (behind PgBouncer
 * with the pooler), MariaDB, the Kafka broker, the HTTP fence and the Kafka consumer fence, their tables, fences and
 * topics, and at the end the writes they accepted. Everything started, the worker slots included ({@link #add}), is
 * stopped by {@link #close}, last started first.
 */
final class Infrastructure {
  private final Topology topology;
  private final int workers;
  private final int poolSize;
  private final PrintStream out;
  private final Deque<AutoCloseable> open = new ArrayDeque<>();
  private FaultCoordinator coordinator;
  private PostgresServer postgres;
  private MariaDbServer maria;
  private PgBouncer bouncer;
  private PoolerSampler pooler;
  private KafkaBroker kafka;
  private HttpWriteServer http;
  private KafkaSink sink;
  private DataPath.Plan dataPaths;
  private OutboxReceiver outboxReceiver;
  private OutboxRelays outboxRelays;

  /** {@code poolSize} 0: the workers connect straight to PostgreSQL; else through PgBouncer with that pool. */
  Infrastructure(Topology topology, int workers, int poolSize, PrintStream out) {
    this.topology = topology;
    this.workers = workers;
    this.poolSize = poolSize;
    this.out = out;
  }

  /** Starts everything (the broker and the databases in parallel), then creates the tables, fences and topics. */
  void start(Consumer<String> note) {
    dataPaths = add(new DataPath.Plan(workers));
    CompletableFuture<KafkaBroker> k = CompletableFuture.supplyAsync(() -> add(KafkaBroker.start(
        dataPaths.brokerProperties())));
    CompletableFuture<PostgresServer> pg = CompletableFuture.supplyAsync(() -> add(PostgresServer.start()));
    CompletableFuture<MariaDbServer> m = CompletableFuture.supplyAsync(() -> add(MariaDbServer.start()));
    coordinator = add(FaultCoordinator.start(topology.coordinator()));
    postgres = pg.join();
    if (poolSize > 0) {
      // Over PostgreSQL's Unix socket, as when both run on one host: PostgreSQL sees no port the agent could read.
      bouncer = add(PgBouncer.start(postgres, "transaction", PgBouncer.Backend.UNIX_SOCKET, poolSize,
          postgres.user()));
      pooler = new PoolerSampler(bouncer, postgres, note);
      add(pooler.start());
    }
    maria = m.join();
    kafka = k.join();
    prepareDatabases();
    kafka.createTopic(FaultRun.TOPIC, topology.partitions());
    kafka.createTopic(FaultRun.DEAD_LETTER_TOPIC, 1);
    kafka.createTopic(FaultRun.UNFENCED_TOPIC, 1);
    if (outbox()) {
      kafka.createTopic(OutboxReceiver.TOPIC, 1);
      outboxReceiver = add(new OutboxReceiver(postgres.jdbcUrl(), kafka.bootstrapServers()));
    }
    http = add(new HttpWriteServer(Ports.freePort(), topology.lockNames()));
    sink = add(new KafkaSink(kafka.bootstrapServers(), FaultRun.TOPIC, topology.partitions(),
        FaultRun.DEAD_LETTER_TOPIC, FaultRun.UNFENCED_TOPIC, topology.lockNames()));
  }

  /** What a worker is told about the resources. */
  FaultRun.Setup workerSetup(Path agentJar) {
    // Only the workers go through the pooler; the harness's own reads (the checker's view) go straight to PostgreSQL.
    String workerPgUrl = bouncer != null ? bouncer.jdbcUrl("postgres", postgres.user()) : postgres.jdbcUrl();
    return new FaultRun.Setup(agentJar, System.getProperty("java.class.path"),
        workerPgUrl + "&socketTimeout=30", maria.jdbcUrl() + "&socketTimeout=30000", http.url(), topology,
        coordinator, http.unfencedUrl(), kafka.bootstrapServers(), outbox() ? outboxReceiver.url() : null);
  }

  private boolean outbox() {
    return topology.work() == Topology.Work.OUTBOX;
  }

  /** The outbox's database ({@code --db}): MariaDB's URL, or PostgreSQL's (straight, never through the pooler). */
  String outboxUrl() {
    return mariaOutbox() ? maria.jdbcUrl() : postgres.jdbcUrl();
  }

  private boolean mariaOutbox() {
    return outbox() && topology.db() == Topology.Db.MARIADB;
  }

  /** {@code --work=outbox}: starts one relay per worker, on the outbox table, straight to its database and Kafka. */
  OutboxRelays startRelays(Path agentJar) {
    outboxRelays = add(new OutboxRelays(agentJar, outboxUrl(), mariaOutbox() ? "mariadb-java-client-" : "postgresql-",
        kafka.bootstrapServers(), workers));
    outboxRelays.start();
    return outboxRelays;
  }

  /** Null unless {@code --work=outbox}. */
  OutboxReceiver outboxReceiver() {
    return outboxReceiver;
  }

  /** Null unless {@code --work=outbox} and started. */
  OutboxRelays outboxRelays() {
    return outboxRelays;
  }

  /** The outbox table's events: how many are not delivered yet (pending or parked). */
  long undeliveredEvents() {
    try (Connection c = DriverManager.getConnection(outboxUrl()); Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT count(*) FROM " + FaultWorker.OUTBOX_TABLE
            + " WHERE state <> 'delivered'")) {
      r.next();
      return r.getLong(1);
    } catch (SQLException e) {
      return -1;
    }
  }

  /** Every event of the outbox table. */
  List<OutboxChecker.Event> outboxEvents() {
    List<OutboxChecker.Event> events = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(outboxUrl()); Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT event_id, payload, channel, coalesce(token, 0), state, last_error FROM "
            + FaultWorker.OUTBOX_TABLE)) {
      while (r.next()) {
        events.add(new OutboxChecker.Event(r.getString(1), r.getString(2), r.getString(3), r.getLong(4),
            r.getString(5), r.getString(6)));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read the outbox table: " + e.getMessage(), e);
    }
    return events;
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
      if (outbox()) {
        if (!mariaOutbox()) {
          installOutbox(c);
        }
        // The receivers dedupe in PostgreSQL, wherever the outbox is.
        OutboxReceiver.createTables(c);
      }
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
      if (mariaOutbox()) {
        installOutbox(c);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot prepare MariaDB: " + e.getMessage(), e);
    }
  }

  /** As {@code sql install --outbox outbox --lock faults} does: the table, its fence for the lock, its triggers. */
  private static void installOutbox(Connection c) throws SQLException {
    new OutboxInstaller(c).install(new SqlOutbox(TableName.parse(FaultWorker.OUTBOX_TABLE), FaultRun.LOCK));
  }

  FaultCoordinator coordinator() {
    return coordinator;
  }

  PostgresServer postgres() {
    return postgres;
  }

  MariaDbServer maria() {
    return maria;
  }

  KafkaBroker kafka() {
    return kafka;
  }

  HttpWriteServer http() {
    return http;
  }

  KafkaSink sink() {
    return sink;
  }

  DataPath.Plan dataPaths() {
    return dataPaths;
  }

  /** Null without the pooler. */
  PoolerSampler pooler() {
    return pooler;
  }

  /** The writes the fenced pg and MariaDB tables of every lock accepted, in the order each table admitted them. */
  List<Accepted> acceptedByTheDatabases() {
    List<Accepted> accepted = new ArrayList<>();
    for (int i = 1; i <= topology.locks(); i++) {
      String lock = topology.lockNames().get(i - 1);
      accepted.addAll(readAccepted("pg", lock, postgres.jdbcUrl(), "SELECT id, write_id, token,"
          + " (extract(epoch FROM accepted_at) * 1000)::bigint FROM " + topology.table("pg_write", i) + " ORDER BY id"));
      accepted.addAll(readAccepted("mariadb", lock, maria.jdbcUrl(), "SELECT id, write_id, token,"
          + " CAST(UNIX_TIMESTAMP(accepted_at) * 1000 AS SIGNED) FROM " + topology.table("maria_write", i)
          + " ORDER BY id"));
    }
    return accepted;
  }

  /** The rows of the unfenced pg table, in the order their transactions committed. */
  List<Accepted> pgUnfencedArrivals() {
    return readAccepted("pg-unfenced", FaultRun.LOCK, postgres.jdbcUrl(), "SELECT arrival,"
        + " write_id, coalesce(token, 0), (extract(epoch FROM accepted_at) * 1000)::bigint FROM pg_unfenced WHERE"
        + " arrival IS NOT NULL ORDER BY arrival");
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
  long pgCounter() {
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

  Map<TopicPartition, Long> endOffsets(List<TopicPartition> partitions) {
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

  /** Registers {@code resource} to be closed by {@link #close}. */
  synchronized <T extends AutoCloseable> T add(T resource) {
    open.push(resource);
    return resource;
  }

  /** Stops everything, last started first; {@code outDir} (null: none) keeps the broker's log. */
  void close(Path outDir) {
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
}
