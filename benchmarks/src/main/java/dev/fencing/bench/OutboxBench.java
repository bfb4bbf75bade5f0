package dev.fencing.bench;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.fence.sql.OutboxInstaller;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.SqlOutbox;
import dev.fencing.fence.sql.TableName;
import dev.fencing.outbox.OutboxRelay;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PostgresServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The tokened outbox's costs on loopback PostgreSQL (scripts/bench.sh outbox):
 *
 * <ol>
 *   <li><b>insert</b>: the writing transaction (UPDATE of a fenced row, COMMIT) with and without one outbox INSERT, in
 *       a forked {@link LoadApp} with this agent attached and holding a real etcd lease (so the statements are
 *       tagged and pass the fences); many keys and one key, 1 and 4 threads.
 *   <li><b>relay</b>: N committed events (one key each) delivered by one or two real {@link OutboxRelay}s (in this
 *       JVM, no agent) to a loopback JDK HttpServer that answers 200 with no body (one write); events per second
 *       from the relays' start to the last event's arrival.
 *   <li><b>kafka</b>: the relay part's events as Kafka records (one key each, a 3-partition topic on a broker in a
 *       child JVM), one and two relays; events per second from the relays' start until no event is pending.
 *   <li><b>latency</b>: a writer committing one event per transaction at a steady rate, the relay and the receiver
 *       all in this JVM, so that System.nanoTime is one clock: from the writer's commit() returning to the event's
 *       arrival at the receiver; LISTEN (default) and --no-listen polling at its default interval (1 s).
 * </ol>
 *
 * <p>Usage: OutboxBench &lt;agent jar&gt; &lt;rounds&gt; &lt;java home&gt; [insert,profile,relay,kafka,latency]
 */
public final class OutboxBench {
  private static final long WARM = Long.getLong("bench.warm", 3);
  private static final long MEASURE = Long.getLong("bench.measure", 5);
  private static final int EVENTS = Integer.getInteger("bench.outbox.events", 20_000);
  private static final int RATE = Integer.getInteger("bench.outbox.rate", 100);
  private static final long LATENCY_SECONDS = Long.getLong("bench.outbox.latency-seconds", 10);
  private static final String LOCK = "bench-pg";
  private static final String RELAY_LOCK = "bench-relay";
  private static final List<String> INSERT_SCENARIOS = List.of("update:1", "outbox-many:1", "outbox-one:1",
      "update:4", "outbox-many:4", "outbox-one:4");
  private static final String EXTRA_AGENT_OPTIONS = System.getProperty("bench.agent-options", "").isEmpty() ? ""
      : "," + System.getProperty("bench.agent-options");

  private OutboxBench() {}

  public static void main(String[] args) throws Exception {
    Path agentJar = Path.of(args[0]);
    int rounds = Integer.parseInt(args[1]);
    Path java = Path.of(args[2], "bin", "java");
    String parts = args.length > 3 ? args[3] : "insert,profile,relay,latency";
    try (PostgresServer pg = PostgresServer.start()) {
      if (parts.contains("insert")) {
        insert(pg, java, agentJar, rounds);
      }
      if (parts.contains("profile")) {
        profile(pg, Integer.getInteger("bench.outbox.profile-statements", 2000));
      }
      if (parts.contains("relay")) {
        relay(pg, rounds);
      }
      if (parts.contains("kafka")) {
        relayKafka(pg, rounds);
      }
      if (parts.contains("latency")) {
        latency(pg, rounds);
      }
    }
    System.exit(0);
  }

  // ---------------------------------------------------------------- insert cost in the writing transaction

  private static void insert(PostgresServer pg, Path java, Path agentJar, int rounds) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single()) {
      etcd.start();
      etcd.awaitHealthy(Duration.ofSeconds(20));
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE bench_fenced (id INT PRIMARY KEY, v BIGINT NOT NULL)");
        s.execute("INSERT INTO bench_fenced SELECT g, 0 FROM generate_series(1, 8) g");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("bench_fenced"), LOCK, false, false));
        new OutboxInstaller(c).install(new SqlOutbox(TableName.parse("bench_outbox"), LOCK));
      }
      // The OpenTelemetry jar is not used: only the "agent" variant runs.
      LoadBench.Launcher launcher = new LoadBench.Launcher(java, agentJar, agentJar, etcd.endpoints(), LOCK,
          EXTRA_AGENT_OPTIONS);
      LoadBench.Results r = new LoadBench.Results(rounds);
      for (int round = 0; round < rounds; round++) {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
          s.execute("TRUNCATE bench_outbox, bench_outbox_key");
          s.execute("VACUUM ANALYZE bench_fenced, bench_outbox, bench_outbox_key");
        }
        // Rotating order of the scenarios within the run.
        List<String> order = new ArrayList<>();
        for (int i = 0; i < INSERT_SCENARIOS.size(); i++) {
          order.add(INSERT_SCENARIOS.get((round + i) % INSERT_SCENARIOS.size()));
        }
        List<String> a = new ArrayList<>(List.of("outbox-tx", pg.jdbcUrl(), Long.toString(WARM),
            Long.toString(MEASURE), "bench_outbox"));
        a.addAll(order);
        r.add(round, "agent", launcher.run("agent", a));
      }
      System.out.println();
      System.out.println("Writing transaction (UPDATE of a fenced row [+ one outbox INSERT], COMMIT), agent attached"
          + " and holding the lease, loopback PostgreSQL; medians of " + rounds + " rounds (" + WARM + " s warm-up, "
          + MEASURE + " s measured per scenario):");
      System.out.println("| scenario | transactions/s | p50 (µs) | p99 (µs) | JVM CPU (µs/tx) |");
      System.out.println("|---|---:|---:|---:|---:|");
      for (String s : INSERT_SCENARIOS) {
        System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f | %.0f | %.1f |%n", s, r.median("agent", s, 0),
            r.median("agent", s, 1), r.median("agent", s, 2), r.median("agent", s, 3) / 1000);
      }
      System.out.println();
      System.out.println("Paired per round (median, min–max over rounds):");
      System.out.println("| ratio | transactions/s | p50 | p99 |");
      System.out.println("|---|---:|---:|---:|");
      String[][] ratios = {{"outbox-many:1", "update:1"}, {"outbox-many:4", "update:4"}, {"outbox-one:1", "update:1"},
          {"outbox-one:4", "update:4"}, {"outbox-one:4", "outbox-many:4"}, {"outbox-many:4", "outbox-many:1"},
          {"outbox-one:4", "outbox-one:1"}, {"update:4", "update:1"}};
      for (String[] q : ratios) {
        System.out.println("| " + q[0] + " / " + q[1] + " | " + r.pairedRatio("agent", q[0], "agent", q[1], 0)
            + " | " + r.pairedRatio("agent", q[0], "agent", q[1], 1) + " | "
            + r.pairedRatio("agent", q[0], "agent", q[1], 2) + " |");
      }
      System.out.flush();
    }
  }

  // ---------------------------------------------------------------- the INSERT inside PostgreSQL

  private static final java.util.regex.Pattern TRIGGER = java.util.regex.Pattern.compile(
      "Trigger ([^:]+): time=([0-9.]+) calls=([0-9]+)");
  private static final java.util.regex.Pattern EXECUTION = java.util.regex.Pattern.compile(
      "Execution Time: ([0-9.]+) ms");

  /**
   * Where the outbox INSERT's time goes inside PostgreSQL: EXPLAIN ANALYZE of the same INSERT (autocommit, many keys)
   * reports each trigger's time and the statement's execution time (the commit's NOTIFY is not in it).
   */
  private static void profile(PostgresServer pg, int statements) throws SQLException {
    String table = "profile_outbox";
    createRelayOutbox(pg, table);
    Map<String, List<Double>> times = new java.util.LinkedHashMap<>();
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
      session(c);
      for (int i = 0; i < statements + 200; i++) {
        Map<String, Double> one = new java.util.LinkedHashMap<>();
        try (java.sql.ResultSet rs = s.executeQuery("EXPLAIN (ANALYZE, SUMMARY ON, COSTS OFF) INSERT INTO " + table
            + " (channel, target, message_key, payload) VALUES ('http', 'http://127.0.0.1:9/hook', 'k" + (i % 1000)
            + "', '{\"id\":7,\"amount\":10}')")) {
          while (rs.next()) {
            String line = rs.getString(1);
            java.util.regex.Matcher m = TRIGGER.matcher(line);
            if (m.find()) {
              one.put("trigger " + m.group(1) + " (calls " + m.group(3) + ")", Double.parseDouble(m.group(2)) * 1000);
            }
            m = EXECUTION.matcher(line);
            if (m.find()) {
              one.put("whole statement (execution time)", Double.parseDouble(m.group(1)) * 1000);
            }
          }
        }
        if (i >= 200) { // the first 200: warm-up (plan cache, new keys)
          one.forEach((k, v) -> times.computeIfAbsent(k, x -> new ArrayList<>()).add(v));
        }
      }
    }
    System.out.println();
    System.out.println("The outbox INSERT inside PostgreSQL (EXPLAIN ANALYZE, " + statements
        + " autocommit INSERTs on one session, message key cycling over 1000 keys, after 200 unmeasured):");
    System.out.println("| part | median µs | p25–p75 µs |");
    System.out.println("|---|---:|---|");
    times.forEach((k, v) -> {
      v.sort(null);
      System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f–%.0f |%n", k, v.get(v.size() / 2), v.get(v.size() / 4),
          v.get(v.size() * 3 / 4));
    });
    System.out.flush();
  }

  // ---------------------------------------------------------------- receiver

  /** A loopback JDK HttpServer that records each event's first arrival (System.nanoTime) and answers in one write. */
  static final class Receiver implements AutoCloseable {
    final HttpServer server;
    final Map<String, Long> arrived = new ConcurrentHashMap<>();
    final AtomicInteger requests = new AtomicInteger();
    volatile CountDownLatch all = new CountDownLatch(0);

    Receiver() throws Exception {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
      server.createContext("/hook", ex -> {
        long now = System.nanoTime();
        try (InputStream in = ex.getRequestBody()) {
          in.readAllBytes();
        }
        requests.incrementAndGet();
        String id = ex.getRequestHeaders().getFirst("Idempotency-Key");
        if (id != null && arrived.putIfAbsent(id, now) == null) {
          all.countDown();
        }
        // Status line and headers only: one write (a body after them would meet delayed ACK, ~40 ms per answer).
        ex.sendResponseHeaders(200, -1);
        ex.close();
      });
      server.setExecutor(Executors.newFixedThreadPool(8));
      server.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/hook";
    }

    void expect(int n) {
      arrived.clear();
      requests.set(0);
      all = new CountDownLatch(n);
    }

    @Override
    public void close() {
      server.stop(0);
      ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
  }

  private static OutboxRelay startRelay(PostgresServer pg, String table, int concurrency, boolean listen)
      throws SQLException {
    return startRelay(pg, table, concurrency, listen, null);
  }

  private static OutboxRelay startRelay(PostgresServer pg, String table, int concurrency, boolean listen,
      String kafkaBootstrap) throws SQLException {
    OutboxRelay.Builder b = OutboxRelay.builder(() -> DriverManager.getConnection(pg.jdbcUrl()), table)
        .concurrency(concurrency).listen(listen).log(new PrintStream(OutputStream.nullOutputStream()));
    if (kafkaBootstrap != null) {
      b.kafkaBootstrap(kafkaBootstrap);
    }
    return b.build().start();
  }

  private static void session(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("SELECT set_config('fencing.lock', '" + RELAY_LOCK + "', false), set_config('fencing.token', '1',"
          + " false), set_config('fencing.grant', '694d8f0a1b2c3d4e', false)");
    }
  }

  private static void createRelayOutbox(PostgresServer pg, String table) throws SQLException {
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
      new OutboxInstaller(c).install(new SqlOutbox(TableName.parse(table), RELAY_LOCK));
    }
  }

  private static void reset(PostgresServer pg, String table) throws SQLException {
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
      s.execute("TRUNCATE " + table + ", " + table + "_key");
      s.execute("VACUUM ANALYZE " + table + ", " + table + "_key");
    }
  }

  // ---------------------------------------------------------------- relay throughput

  private static void relay(PostgresServer pg, int rounds) throws Exception {
    String table = "relay_outbox";
    createRelayOutbox(pg, table);
    // variant: {relays, concurrency per relay, 1: every event of one key (EVENTS / 10 of them)}
    int[][] variants = {{1, 4, 0}, {2, 4, 0}, {1, 16, 0}, {1, 4, 1}};
    String[] names = {"1 relay (defaults: batch 100, concurrency 4)", "2 relays (defaults each)",
        "1 relay, concurrency 16", "1 relay (defaults), all events of one key"};
    double[][] eps = new double[variants.length][rounds];
    // [variant][round] = {JVM CPU µs per event, machine busy share of all cores}
    double[][][] cpu = new double[variants.length][rounds][];
    try (Receiver receiver = new Receiver()) {
      // One unmeasured run first: JIT of the relay, the HTTP client and the server.
      fill(pg, table, receiver.url(), "w", Math.min(EVENTS, 5000), false);
      deliver(pg, table, receiver, Math.min(EVENTS, 5000), 1, 4);
      for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < variants.length; k++) {
          int v = (round + k) % variants.length;
          reset(pg, table);
          int n = variants[v][2] == 1 ? EVENTS / 10 : EVENTS;
          fill(pg, table, receiver.url(), "r" + round + "v" + v, n, variants[v][2] == 1);
          long jvm0 = jvmCpuNanos();
          long[] machine0 = machineTicks();
          eps[v][round] = deliver(pg, table, receiver, n, variants[v][0], variants[v][1]);
          long[] machine1 = machineTicks();
          cpu[v][round] = new double[] {(jvmCpuNanos() - jvm0) / 1e3 / n,
              (machine1[0] - machine0[0]) / (double) Math.max(1, machine1[1] - machine0[1])};
          System.err.printf(Locale.ROOT, "  round %d %s: %.0f events/s, JVM CPU %.0f µs/event, machine busy %.0f%%%n",
              round, names[v], eps[v][round], cpu[v][round][0], 100 * cpu[v][round][1]);
        }
      }
    }
    reset(pg, table);
    System.out.println();
    System.out.println("Relay throughput: " + EVENTS + " committed events (one key each; one key: " + EVENTS / 10
        + " events), HTTP POST of a 21-byte JSON body to a loopback JDK HttpServer answering 200; from the relays' start to the last event's arrival; "
        + rounds + " rounds:");
    System.out.println("| relays | events/s (median) | min–max | / 1 relay (paired) | this JVM's CPU per event"
        + " (relays, HTTP client, receiver; µs) | machine busy (all cores) |");
    System.out.println("|---|---:|---:|---:|---:|---:|");
    for (int v = 0; v < variants.length; v++) {
      double[] q = new double[rounds];
      for (int i = 0; i < rounds; i++) {
        q[i] = eps[v][i] / eps[0][i];
      }
      double[] us = new double[rounds];
      double[] busy = new double[rounds];
      for (int i = 0; i < rounds; i++) {
        us[i] = cpu[v][i][0];
        busy[i] = cpu[v][i][1];
      }
      System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f–%.0f | %.2f | %.0f | %.0f %% |%n", names[v],
          RoundStats.median(eps[v]), Arrays.stream(eps[v]).min().orElse(0), Arrays.stream(eps[v]).max().orElse(0),
          RoundStats.median(q), RoundStats.median(us), 100 * RoundStats.median(busy));
    }
    System.out.flush();
  }

  // ---------------------------------------------------------------- relay throughput, Kafka

  private static void relayKafka(PostgresServer pg, int rounds) throws Exception {
    String table = "kafka_outbox";
    String topic = "outbox-bench";
    createRelayOutbox(pg, table);
    String[] names = {"1 relay (defaults: batch 100, concurrency 4)", "2 relays (defaults each)"};
    double[][] eps = new double[names.length][rounds];
    try (KafkaBroker kafka = KafkaBroker.start()) {
      kafka.createTopic(topic, 3);
      // One unmeasured run first: JIT, the producers' first metadata.
      fill(pg, table, topic, "w", Math.min(EVENTS, 5000), false, "kafka");
      drain(pg, table, 1, kafka.bootstrapServers());
      for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < names.length; k++) {
          int v = (round + k) % names.length;
          reset(pg, table);
          fill(pg, table, topic, "r" + round + "v" + v, EVENTS, false, "kafka");
          eps[v][round] = EVENTS / drain(pg, table, v + 1, kafka.bootstrapServers());
          System.err.printf(Locale.ROOT, "  round %d kafka %s: %.0f events/s%n", round, names[v], eps[v][round]);
        }
      }
    }
    reset(pg, table);
    System.out.println();
    System.out.println("Relay throughput to Kafka: " + EVENTS + " committed events (one key each), records of a 21-byte"
        + " JSON value to a 3-partition topic on a loopback broker (acks=all, idempotent: the relay's producer);"
        + " from the relays' start until no event is pending; " + rounds + " rounds:");
    System.out.println("| relays | events/s (median) | min–max | / 1 relay (paired) |");
    System.out.println("|---|---:|---:|---:|");
    for (int v = 0; v < names.length; v++) {
      double[] q = new double[rounds];
      for (int i = 0; i < rounds; i++) {
        q[i] = eps[v][i] / eps[0][i];
      }
      System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f–%.0f | %.2f |%n", names[v], RoundStats.median(eps[v]),
          Arrays.stream(eps[v]).min().orElse(0), Arrays.stream(eps[v]).max().orElse(0), RoundStats.median(q));
    }
    System.out.flush();
  }

  /** Seconds from the relays' start until the table has no pending event. */
  private static double drain(PostgresServer pg, String table, int relays, String kafkaBootstrap) throws Exception {
    List<OutboxRelay> started = new ArrayList<>();
    long t0 = System.nanoTime();
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
        PreparedStatement pending = c.prepareStatement("SELECT count(*) FROM " + table
            + " WHERE state = 'pending'")) {
      for (int i = 0; i < relays; i++) {
        started.add(startRelay(pg, table, 4, true, kafkaBootstrap));
      }
      long deadline = t0 + TimeUnit.SECONDS.toNanos(120);
      while (true) {
        try (ResultSet rs = pending.executeQuery()) {
          rs.next();
          if (rs.getLong(1) == 0) {
            return (System.nanoTime() - t0) / 1e9;
          }
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("events still pending after 120 s in " + table);
        }
        Thread.sleep(5);
      }
    } finally {
      started.forEach(OutboxRelay::close);
    }
  }

  private static long jvmCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /** {busy ticks, all ticks} of all cores from /proc/stat (Linux); {0, 1} elsewhere. */
  private static long[] machineTicks() {
    try {
      String[] f = java.nio.file.Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long all = 0;
      for (int i = 1; i < f.length && i <= 8; i++) {
        all += Long.parseLong(f[i]);
      }
      long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]); // idle + iowait
      return new long[] {all - idle, all};
    } catch (Exception e) {
      return new long[] {0, 1};
    }
  }

  /** Commits n events, one key each (or all of one key), in transactions of 1000. */
  private static void fill(PostgresServer pg, String table, String url, String prefix, int n, boolean oneKey)
      throws SQLException {
    fill(pg, table, url, prefix, n, oneKey, "http");
  }

  /** The same, to an HTTP URL or a Kafka topic ({@code channel} http or kafka). */
  private static void fill(PostgresServer pg, String table, String target, String prefix, int n, boolean oneKey,
      String channel) throws SQLException {
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
        PreparedStatement ins = c.prepareStatement("INSERT INTO " + table
            + " (event_id, channel, target, message_key, payload) VALUES (?, '" + channel + "', ?, ?, ?)")) {
      session(c);
      c.setAutoCommit(false);
      for (int i = 0; i < n; i++) {
        ins.setString(1, prefix + "-" + i);
        ins.setString(2, target);
        ins.setString(3, oneKey ? prefix + "-k" : prefix + "-k" + i);
        ins.setString(4, "{\"id\":7,\"amount\":10}");
        ins.addBatch();
        if ((i + 1) % 1000 == 0 || i == n - 1) {
          ins.executeBatch();
          c.commit();
        }
      }
    }
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
      s.execute("ANALYZE " + table);
    }
  }

  /** Events per second from the relays' start to the n-th distinct event's arrival. */
  private static double deliver(PostgresServer pg, String table, Receiver receiver, int n, int relays,
      int concurrency) throws Exception {
    receiver.expect(n);
    List<OutboxRelay> started = new ArrayList<>();
    long t0 = System.nanoTime();
    try {
      for (int i = 0; i < relays; i++) {
        started.add(startRelay(pg, table, concurrency, true));
      }
      if (!receiver.all.await(120, TimeUnit.SECONDS)) {
        throw new IllegalStateException("only " + receiver.arrived.size() + " of " + n + " events arrived");
      }
      return n / ((System.nanoTime() - t0) / 1e9);
    } finally {
      started.forEach(OutboxRelay::close);
    }
  }

  // ---------------------------------------------------------------- commit-to-delivery latency

  private static void latency(PostgresServer pg, int rounds) throws Exception {
    String table = "latency_outbox";
    createRelayOutbox(pg, table);
    String[] names = {"LISTEN (default)", "--no-listen, poll every 1 s (default)"};
    // [mode][round] = {p50 ms, p99 ms, max ms}
    double[][][] r = new double[2][rounds][];
    try (Receiver receiver = new Receiver()) {
      for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < 2; k++) {
          int mode = (round + k) % 2;
          reset(pg, table);
          r[mode][round] = steady(pg, table, receiver, mode == 0, "l" + round + "m" + mode);
          System.err.printf(Locale.ROOT, "  round %d %s: p50 %.2f ms, p99 %.2f ms, max %.2f ms%n", round,
              names[mode], r[mode][round][0], r[mode][round][1], r[mode][round][2]);
        }
      }
    }
    reset(pg, table);
    System.out.println();
    System.out.println("Commit-to-delivery latency: one event per transaction at " + RATE + " transactions/s for "
        + LATENCY_SECONDS + " s after 2 s unmeasured, writer, relay (defaults) and receiver in one JVM"
        + " (System.nanoTime from the writer's commit() returning to the receiver's arrival); medians of " + rounds
        + " rounds:");
    System.out.println("| wake-up | p50 (ms) | p99 (ms) | max (ms) | per round p50 / p99 |");
    System.out.println("|---|---:|---:|---:|---|");
    for (int m = 0; m < 2; m++) {
      double[] p50 = new double[rounds];
      double[] p99 = new double[rounds];
      double[] max = new double[rounds];
      StringBuilder per = new StringBuilder();
      for (int i = 0; i < rounds; i++) {
        p50[i] = r[m][i][0];
        p99[i] = r[m][i][1];
        max[i] = r[m][i][2];
        per.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.1f / %.1f", p50[i], p99[i]));
      }
      System.out.printf(Locale.ROOT, "| %s | %.2f | %.2f | %.1f | %s |%n", names[m], RoundStats.median(p50),
          RoundStats.median(p99), RoundStats.median(max), per);
    }
    System.out.flush();
  }

  /** {p50, p99, max} in ms over the measured events. */
  private static double[] steady(PostgresServer pg, String table, Receiver receiver, boolean listen, String prefix)
      throws Exception {
    int warmEvents = 2 * RATE;
    int n = (int) (warmEvents + LATENCY_SECONDS * RATE);
    receiver.expect(n);
    long[] committed = new long[n];
    try (OutboxRelay relay = startRelay(pg, table, 4, listen);
        Connection c = DriverManager.getConnection(pg.jdbcUrl());
        PreparedStatement ins = c.prepareStatement("INSERT INTO " + table
            + " (event_id, channel, target, message_key, payload) VALUES (?, 'http', ?, ?, ?)")) {
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (listen && !relay.listening() && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      session(c);
      c.setAutoCommit(false);
      long period = 1_000_000_000L / RATE;
      long start = System.nanoTime();
      for (int i = 0; i < n; i++) {
        long due = start + i * period;
        long wait = due - System.nanoTime();
        if (wait > 0) {
          LockSupport.parkNanos(wait);
        }
        ins.setString(1, prefix + "-" + i);
        ins.setString(2, receiver.url());
        ins.setString(3, prefix + "-k" + i);
        ins.setString(4, "{\"id\":7,\"amount\":10}");
        ins.executeUpdate();
        c.commit();
        committed[i] = System.nanoTime();
      }
      if (!receiver.all.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("only " + receiver.arrived.size() + " of " + n + " events arrived");
      }
    }
    double[] ms = new double[n - warmEvents];
    for (int i = warmEvents; i < n; i++) {
      ms[i - warmEvents] = (receiver.arrived.get(prefix + "-" + i) - committed[i]) / 1e6;
    }
    Arrays.sort(ms);
    return new double[] {ms[ms.length / 2], ms[(int) (ms.length * 0.99)], ms[ms.length - 1]};
  }
}
