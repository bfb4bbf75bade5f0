package dev.fencing.bench;

import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PgBouncer;
import dev.fencing.testing.PostgresServer;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The load parts of the benchmark: the same {@link LoadApp} launched with no agent, with ours (holding a real lease
 * from a real single-node etcd, so every side effect is tagged) and with the OpenTelemetry Java agent (exporters off:
 * its instrumentation and span creation, no network), in rounds with a rotating order; medians per variant and
 * scenario, and ratios against no agent paired within each round (see {@link Results}).
 *
 * <p>Usage: LoadBench pg|clients|kafka &lt;agent jar&gt; &lt;OpenTelemetry agent jar&gt; &lt;rounds&gt; &lt;java home&gt;
 */
public final class LoadBench {
  /** Library jars the forked app needs, by file name prefix; the rest of the bench class path stays out of it. */
  private static final List<String> APP_LIBS = List.of("postgresql-", "okhttp-", "okio", "kotlin-stdlib",
      "httpclient5-", "httpcore5-", "kafka-clients-", "lz4-java-", "snappy-java-", "zstd-jni-", "slf4j-api-");
  private static final String[] VARIANTS = {"none", "agent", "otel"};
  /**
   * clients and kafka: also no agent with the app sending the agent's headers itself (LoadApp's
   * -Dbench.fencing-headers), so that agent / headers is what the agent costs beyond carrying them.
   */
  private static final String[] HEADER_VARIANTS = {"none", "headers", "agent", "otel"};
  private static final long WARM = Long.getLong("bench.warm", 5);
  /**
   * The HTTP part's warm-up: with 5 s, C2 was still compiling jdk.internal.net.http and sun.net.httpserver for about
   * one core throughout the measured window, in either variant, and which variant it slowed was luck; after 25 s it
   * used under 5 µs per POST (LoadApp -Dbench.threads=true).
   */
  private static final long HTTP_WARM = Long.getLong("bench.warm", 25);
  /** More agent options for diagnosis, e.g. -Dbench.agent-options=instrumentation.executors.enabled=false. */
  private static final String EXTRA_AGENT_OPTIONS = System.getProperty("bench.agent-options", "").isEmpty() ? ""
      : "," + System.getProperty("bench.agent-options");
  /** -Xms = -Xmx in every variant (default); -Dbench.fixed-heap=false for the session-3 method. */
  private static final boolean FIXED_HEAP = !"false".equals(System.getProperty("bench.fixed-heap"));
  private static final long MEASURE = Long.getLong("bench.measure", 5);

  private LoadBench() {}

  public static void main(String[] args) throws Exception {
    String part = args[0];
    Path agentJar = Path.of(args[1]);
    Path otelJar = Path.of(args[2]);
    int rounds = Integer.parseInt(args[3]);
    Path java = Path.of(args[4], "bin", "java");
    if (!Files.isRegularFile(otelJar)) {
      throw new IllegalStateException(otelJar + " not found: scripts/bench.sh copies it at package time");
    }
    try (EtcdCluster etcd = EtcdCluster.single()) {
      etcd.start();
      etcd.awaitHealthy(Duration.ofSeconds(20));
      switch (part) {
        case "pg":
          pg(new Launcher(java, agentJar, otelJar, etcd.endpoints(), "bench-pg", EXTRA_AGENT_OPTIONS), rounds);
          break;
        case "pooler":
          pooler(new Launcher(java, agentJar, otelJar, etcd.endpoints(), "bench-pg", EXTRA_AGENT_OPTIONS), rounds);
          break;
        case "clients":
          clients(new Launcher(java, agentJar, otelJar, etcd.endpoints(), "bench-http", EXTRA_AGENT_OPTIONS), rounds);
          break;
        case "kafka":
          kafka(new Launcher(java, agentJar, otelJar, etcd.endpoints(), "bench-kafka", EXTRA_AGENT_OPTIONS), rounds);
          break;
        case "kafka-perf":
          kafkaPerf(new Launcher(java, agentJar, otelJar, etcd.endpoints(), "bench-kafka", EXTRA_AGENT_OPTIONS),
              rounds);
          break;
        default:
          throw new IllegalArgumentException("unknown part " + part);
      }
    }
  }

  private static void pg(Launcher launcher, int rounds) throws Exception {
    try (PostgresServer pg = PostgresServer.start()) {
      createTables(pg, launcher.lock);
      // Without our agent, writes to the fenced table fail (FN002, no token): those variants run the plain table only.
      Map<String, List<String>> scenarios = new LinkedHashMap<>();
      scenarios.put("none", List.of("bench_plain:1", "bench_plain:4"));
      scenarios.put("agent", List.of("bench_plain:1", "bench_plain:4", "bench_fenced:1", "bench_fenced:4"));
      scenarios.put("otel", List.of("bench_plain:1", "bench_plain:4"));
      Results r = new Results(rounds);
      for (int round = 0; round < rounds; round++) {
        for (String v : order(round)) {
          // Each run starts from the same table state, not from the dead row versions of the runs before it.
          try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("VACUUM bench_plain, bench_fenced");
          }
          List<String> a = new ArrayList<>(List.of("pg", pg.jdbcUrl(), Long.toString(WARM), Long.toString(MEASURE)));
          a.addAll(scenarios.get(v));
          r.add(round, v, launcher.run(v, a));
        }
      }
      System.out.println("PostgreSQL single-row UPDATE (PreparedStatement, autocommit), loopback; medians of "
          + rounds + " rounds:");
      r.table(List.of("bench_plain:1", "bench_plain:4", "bench_fenced:1", "bench_fenced:4"));
      System.out.println();
      System.out.println("Within each agent run (paired per round; median, min-max over rounds):");
      System.out.println("| ratio of UPDATE/s | value | target |");
      System.out.println("|---|---:|---|");
      System.out.println("| fenced / unfenced, 1 connection | " + r.pairedRatio("agent", "bench_fenced:1", "agent",
          "bench_plain:1", 0) + " | ≥ 0.85 |");
      System.out.println("| fenced / unfenced, 4 connections | " + r.pairedRatio("agent", "bench_fenced:4", "agent",
          "bench_plain:4", 0) + " | ≥ 0.85 |");
      System.out.println("| fenced, 4 connections / 1 (same token) | " + r.pairedRatio("agent", "bench_fenced:4",
          "agent", "bench_fenced:1", 0) + " | ≥ 1.5 |");
      System.out.println("| unfenced, 4 connections / 1 (agent) | " + r.pairedRatio("agent", "bench_plain:4",
          "agent", "bench_plain:1", 0) + " | (machine's scaling) |");
      System.out.println("| unfenced, 4 connections / 1 (no agent) | " + r.pairedRatio("none", "bench_plain:4",
          "none", "bench_plain:1", 0) + " | (machine's scaling) |");
      System.out.println();
      TriggerProfile.run(pg.jdbcUrl(), Integer.getInteger("bench.trigger-statements", 3000));
    }
  }

  /** bench_plain and bench_fenced, 8 rows each; the fence (table mode) on bench_fenced for the agent's lock. */
  private static void createTables(PostgresServer pg, String lock) throws Exception {
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
      for (String t : List.of("bench_plain", "bench_fenced")) {
        s.execute("CREATE TABLE " + t + " (id INT PRIMARY KEY, v BIGINT NOT NULL)");
        s.execute("INSERT INTO " + t + " SELECT g, 0 FROM generate_series(1, 8) g");
      }
      // The same lock as the agent's: the fence checks the session's lock name, then its token.
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("bench_fenced"), lock, false, false));
    }
  }

  /**
   * The pg part's UPDATE through PgBouncer in transaction mode: the agent then sets the session values in each
   * writing transaction, and runs each autocommit write in a transaction of its own (set_config + UPDATE + COMMIT), so
   * this is the dearest case of tagging behind a transaction pooler. No agent and this agent only (the OpenTelemetry
   * agent's cost does not change with a pooler).
   */
  private static void pooler(Launcher launcher, int rounds) throws Exception {
    try (PostgresServer pg = PostgresServer.start(); PgBouncer bouncer = PgBouncer.start(pg, 4)) {
      createTables(pg, launcher.lock);
      Map<String, List<String>> scenarios = new LinkedHashMap<>();
      scenarios.put("none", List.of("bench_plain:1", "bench_plain:4"));
      scenarios.put("agent", List.of("bench_plain:1", "bench_plain:4", "bench_fenced:1", "bench_fenced:4"));
      Results r = new Results(rounds);
      for (int round = 0; round < rounds; round++) {
        for (String v : round % 2 == 0 ? List.of("none", "agent") : List.of("agent", "none")) {
          try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("VACUUM bench_plain, bench_fenced");
          }
          List<String> a = new ArrayList<>(List.of("pg", bouncer.jdbcUrl("postgres", pg.user()), Long.toString(WARM),
              Long.toString(MEASURE)));
          a.addAll(scenarios.get(v));
          r.add(round, v, launcher.run(v, a));
        }
      }
      System.out.println("PostgreSQL single-row UPDATE (PreparedStatement, autocommit) through PgBouncer 1.18,"
          + " pool_mode=transaction, 4 server connections; medians of " + rounds + " rounds:");
      r.table(List.of("bench_plain:1", "bench_plain:4", "bench_fenced:1", "bench_fenced:4"));
      System.out.println();
      System.out.println("Within each agent run (paired per round; median, min-max over rounds):");
      System.out.println("| ratio of UPDATE/s | value |");
      System.out.println("|---|---:|");
      System.out.println("| fenced / unfenced, 1 connection | " + r.pairedRatio("agent", "bench_fenced:1", "agent",
          "bench_plain:1", 0) + " |");
      System.out.println("| fenced / unfenced, 4 connections | " + r.pairedRatio("agent", "bench_fenced:4", "agent",
          "bench_plain:4", 0) + " |");
    }
  }

  /**
   * clients: another build of the agent jar (say an older commit's), run as a variant "base" with this one's options
   * in the same rounds: its ratio to no agent beside this build's, and agent / base.
   */
  private static final String CLIENTS_BASE_AGENT = System.getProperty("bench.clients.base-agent", "");
  /** clients: which clients run, e.g. -Dbench.clients.which=apache (each adds its 25 s warm-up to every run). */
  private static final List<String> CLIENTS_WHICH = Arrays.stream(System.getProperty("bench.clients.which",
      "jdk,okhttp,apache").split(",")).map(String::strip).collect(Collectors.toList());

  private static void clients(Launcher launcher, int rounds) throws Exception {
    for (String c : CLIENTS_WHICH) {
      if (!List.of("jdk", "okhttp", "apache").contains(c)) {
        throw new IllegalArgumentException("bench.clients.which: '" + c + "' is not one of jdk, okhttp, apache");
      }
    }
    String[] variants = HEADER_VARIANTS;
    if (!CLIENTS_BASE_AGENT.isEmpty()) {
      if (!Files.isRegularFile(Path.of(CLIENTS_BASE_AGENT))) {
        throw new IllegalArgumentException("bench.clients.base-agent: " + CLIENTS_BASE_AGENT + " is not a file; "
            + "expected another build's fencing-agent.jar");
      }
      variants = Arrays.copyOf(HEADER_VARIANTS, HEADER_VARIANTS.length + 1);
      variants[HEADER_VARIANTS.length] = "base";
    }
    Results r = new Results(rounds);
    for (int round = 0; round < rounds; round++) {
      for (String v : order(round, variants)) {
        List<String> a = new ArrayList<>(List.of("http", Long.toString(HTTP_WARM), Long.toString(MEASURE)));
        a.addAll(CLIENTS_WHICH);
        r.add(round, v, launcher.run(v, a));
      }
    }
    System.out.println("HTTP POST to a loopback JDK HttpServer, one client thread; medians of " + rounds + " rounds:");
    r.table(CLIENTS_WHICH);
    // The server runs in the app's JVM, so the agent's column also pays the server's parsing of the headers it adds,
    // which a fence pays in its own process in production: the "headers" variant (no agent, the app sends the same
    // headers itself) pays it too, and agent / headers is what the agent itself costs.
    headersTable(r, CLIENTS_WHICH);
    if (!CLIENTS_BASE_AGENT.isEmpty()) {
      System.out.println();
      System.out.println("base = " + CLIENTS_BASE_AGENT);
      System.out.println("| scenario | base / no agent: ops/s | base / headers: ops/s | agent / base: ops/s | agent / "
          + "base: JVM CPU per op | agent / base: p99 |");
      System.out.println("|---|---:|---:|---:|---:|---:|");
      for (String s : CLIENTS_WHICH) {
        System.out.println("| " + s + " | " + r.pairedRatio("base", s, "none", s, 0) + " | "
            + r.pairedRatio("base", s, "headers", s, 0) + " | " + r.pairedRatio("agent", s, "base", s, 0) + " | "
            + r.pairedRatio("agent", s, "base", s, 3) + " | " + r.pairedRatio("agent", s, "base", s, 2) + " |");
      }
    }
  }

  /** agent / headers (what the agent costs beyond carrying its headers) and headers / none, per scenario. */
  private static void headersTable(Results r, List<String> scenarios) {
    System.out.println();
    System.out.println("| scenario | agent / no agent sending the same headers: ops/s | JVM CPU per op | headers / no "
        + "agent: ops/s |");
    System.out.println("|---|---:|---:|---:|");
    for (String s : scenarios) {
      System.out.println("| " + s + " | " + r.pairedRatio("agent", s, "headers", s, 0) + " | "
          + r.pairedRatio("agent", s, "headers", s, 3) + " | " + r.pairedRatio("headers", s, "none", s, 0) + " |");
    }
  }

  private static void kafka(Launcher launcher, int rounds) throws Exception {
    Map<String, String> retention = Map.of("log.segment.bytes", "67108864", "log.retention.bytes", "134217728",
        "log.retention.check.interval.ms", "5000");
    try (KafkaBroker broker = KafkaBroker.start(retention)) {
      broker.createTopic("bench", 1);
      Results r = new Results(rounds);
      for (int round = 0; round < rounds; round++) {
        for (String v : order(round, HEADER_VARIANTS)) {
          r.add(round, v, launcher.run(v, List.of("kafka", broker.bootstrapServers(), "bench", Long.toString(WARM),
              Long.toString(MEASURE))));
        }
      }
      System.out.println("Kafka producer, 1 KB records, acks=1, one partition, broker in a child JVM; medians of "
          + rounds + " rounds:");
      r.table(List.of("kafka-async", "kafka-sync"));
      // The broker shares the 2 cores: the bytes of the agent's three headers cost the producer and the broker
      // something whoever adds them.
      headersTable(r, List.of("kafka-async", "kafka-sync"));
    }
  }

  /** kafka-perf: records per run by record size, so that each run lasts 20 s or more on this machine. */
  private static final long PERF_RECORDS_SMALL = Long.getLong("bench.perf.records-100", 5_000_000);
  private static final long PERF_RECORDS_LARGE = Long.getLong("bench.perf.records-1024", 1_500_000);
  /** kafka-perf: the record sizes, e.g. -Dbench.perf.sizes=100 (records above 100 bytes: records-1024 of them). */
  private static final List<String> PERF_SIZES = List.of(System.getProperty("bench.perf.sizes", "100,1024")
      .split(","));
  /**
   * kafka-perf: more JVM options for the producer JVM, for profiles; %v in them is the variant, size and round, e.g.
   * -Dbench.perf.jvm-args=-XX:StartFlightRecording=filename=/tmp/%v.jfr,settings=profile.
   */
  private static final String PERF_JVM_ARGS = System.getProperty("bench.perf.jvm-args", "");
  /**
   * kafka-perf: more producer settings for every variant, comma-separated, e.g.
   * -Dbench.perf.producer-props=batch.size=65536,linger.ms=10 (to tell a per-batch cost from a per-byte one).
   */
  private static final String PERF_PRODUCER_PROPS = System.getProperty("bench.perf.producer-props", "");
  /**
   * kafka-perf: another build of the agent jar (say main's), run as a third variant "base" in the same rounds, with
   * the same options as this one: its ratio to no agent beside this build's.
   */
  private static final String PERF_BASE_AGENT = System.getProperty("bench.perf.base-agent", "");
  /**
   * kafka-perf: the variants, in rotating order: none, agent (default), base (with bench.perf.base-agent), header (no
   * agent, every record given the agent's header by {@link FencingHeaderInterceptor}), exempt (the agent, the topic
   * exempt: nothing tagged), header-exempt (both: the agent present, the header added by the interceptor),
   * header-min (no agent, the smallest header instead: a one-letter name, a one-digit value), header-name-min and
   * header-value-min (no agent, only the name or only the value that small), header-nogrant (no agent, the
   * agent's header without its grant, {@code <token>;<lock>}), e.g. -Dbench.perf.variants=none,header,agent.
   */
  private static final String[] PERF_VARIANTS = System.getProperty("bench.perf.variants",
      PERF_BASE_AGENT.isEmpty() ? "none,agent" : "none,agent,base").split(",");
  /**
   * kafka-perf: the header forms of {@link FencingHeaderInterceptor} other than the agent's, each run as variant
   * {@code header-<form>} and paired with {@code header}.
   */
  private static final List<String> HEADER_FORMS = List.of("min", "name-min", "value-min", "nogrant");

  /**
   * Kafka's own ProducerPerformance (kafka-tools, the broker's version), acks=1, one partition, 100-byte and
   * 1 KB records, no agent and this agent, in paired rounds. Each run sends a fixed number of records from a cold
   * JVM (20 s or more), so the agent's wait for its lease and both variants' JIT warm-up are a small share of it.
   */
  private static void kafkaPerf(Launcher launcher, int rounds) throws Exception {
    Map<String, String> retention = Map.of("log.segment.bytes", "67108864", "log.retention.bytes", "134217728",
        "log.retention.check.interval.ms", "5000");
    String[] variants = PERF_VARIANTS;
    for (String v : variants) {
      if (!List.of("none", "agent", "base", "header", "exempt", "header-exempt").contains(v) && headerForm(v) == null
          || v.equals("base") && PERF_BASE_AGENT.isEmpty()) {
        throw new IllegalArgumentException("bench.perf.variants: '" + v + "' is not one of none, agent, header, "
            + "header-<form> (form one of " + HEADER_FORMS + "), exempt, header-exempt, base (base needs "
            + "bench.perf.base-agent)");
      }
    }
    try (KafkaBroker broker = KafkaBroker.start(retention)) {
      broker.createTopic("bench", 1);
      Results r = new Results(rounds);
      for (int round = 0; round < rounds; round++) {
        for (String v : order(round, variants)) {
          Map<String, long[]> m = new LinkedHashMap<>();
          for (String size : PERF_SIZES) {
            int bytes = Integer.parseInt(size.strip());
            m.putAll(launcher.producerPerformance(v, broker.bootstrapServers(), "bench", bytes,
                bytes <= 100 ? PERF_RECORDS_SMALL : PERF_RECORDS_LARGE, round));
          }
          r.add(round, v, m);
        }
      }
      System.out.println("Kafka ProducerPerformance, acks=1, one partition, broker in a child JVM; records/s, "
          + "medians of " + rounds + " rounds (p50 and p99 in ms; JVM CPU: the producer JVM's CPU per record, ns):");
      List<String> scenarios = PERF_SIZES.stream().map(x -> "perf-" + x.strip()).collect(Collectors.toList());
      r.table(scenarios, "ms");
      if (!PERF_BASE_AGENT.isEmpty()) {
        System.out.println("| scenario | base / no agent: records/s | agent / base: records/s | agent / base: JVM CPU "
            + "per record |");
        System.out.println("|---|---:|---:|---:|");
        for (String sc : scenarios) {
          System.out.println("| " + sc + " | " + r.pairedRatio("base", sc, "none", sc, 0) + " | "
              + r.pairedRatio("agent", sc, "base", sc, 0) + " | " + r.pairedRatio("agent", sc, "base", sc, 3) + " |");
        }
      }
      // Every variant against no agent, and the agent against the same header without it, paired per round.
      List<String[]> pairs = new ArrayList<>();
      for (String v : variants) {
        if (!v.equals("none")) {
          pairs.add(new String[] {v, "none"});
        }
      }
      List<String> vs = List.of(variants);
      if (vs.contains("header")) {
        for (String v : List.of("agent", "header-exempt")) {
          if (vs.contains(v)) {
            pairs.add(new String[] {v, "header"});
          }
        }
      }
      if (vs.contains("header-exempt") && vs.contains("agent")) {
        pairs.add(new String[] {"agent", "header-exempt"});
      }
      for (String v : variants) {
        if (headerForm(v) != null && vs.contains("header")) {
          pairs.add(new String[] {"header", v});
        }
      }
      System.out.println();
      System.out.println("| scenario | ratio | records/s | JVM CPU per record | p50 |");
      System.out.println("|---|---|---:|---:|---:|");
      for (String sc : scenarios) {
        for (String[] q : pairs) {
          System.out.println("| " + sc + " | " + q[0] + " / " + q[1] + " | " + r.pairedRatio(q[0], sc, q[1], sc, 0)
              + " | " + r.pairedRatio(q[0], sc, q[1], sc, 3) + " | " + r.pairedRatio(q[0], sc, q[1], sc, 1) + " |");
        }
      }
    }
  }

  /** The interceptor's header form of kafka-perf variant {@code header-<form>}, or null for any other variant. */
  private static String headerForm(String variant) {
    String form = variant.startsWith("header-") ? variant.substring("header-".length()) : "";
    return HEADER_FORMS.contains(form) ? form : null;
  }

  /** The variants in a rotating order: no variant always runs first (the machine warms up, or gets busier). */
  private static List<String> order(int round) {
    return order(round, VARIANTS);
  }

  private static List<String> order(int round, String[] variants) {
    List<String> o = new ArrayList<>();
    for (int i = 0; i < variants.length; i++) {
      o.add(variants[(round + i) % variants.length]);
    }
    return o;
  }

  /** Launches {@link LoadApp} per variant and parses its result lines. */
  static final class Launcher {
    final Path java;
    final Path agentJar;
    final Path otelJar;
    final String endpoints;
    final String lock;
    final String agentOptions;
    final String classPath;

    Launcher(Path java, Path agentJar, Path otelJar, String endpoints, String lock, String agentOptions)
        throws Exception {
      this.java = java;
      this.agentJar = agentJar;
      this.otelJar = otelJar;
      this.endpoints = endpoints;
      this.lock = lock;
      this.agentOptions = agentOptions;
      this.classPath = appClassPath();
    }

    List<String> command(String variant, List<String> args) {
      // The JDK HttpServer closes connections idle for 30 s; the JDK client's spare pooled connection then races a
      // POST that picks it ("header parser received no bytes"), once the 25 s warm-up makes a run last that long.
      List<String> c = new ArrayList<>(List.of(java.toString(), "-Xmx512m", "-Dsun.net.httpserver.idleInterval=3600"));
      if (FIXED_HEAP) {
        c.add("-Xms512m");
      }
      if (variant.equals("agent") || variant.equals("base")) {
        // base: the clients part's other build, with the same options.
        c.add("-javaagent:" + (variant.equals("base") ? CLIENTS_BASE_AGENT : agentJar) + "=lock=" + lock + ",etcd.endpoints=" + endpoints
            + ",standby=wait,standby.timeout=20s" + agentOptions);
      } else if (variant.equals("headers")) {
        c.add("-Dbench.fencing-headers=true");
      } else if (variant.equals("otel")) {
        c.add("-javaagent:" + otelJar);
        // Instrumentation and spans as in production, no exporter traffic on this machine.
        c.addAll(List.of("-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none",
            "-Dotel.javaagent.logging=none", "-Dotel.service.name=bench"));
      }
      if (Boolean.getBoolean("bench.threads")) {
        c.add("-Dbench.threads=true");
      }
      c.addAll(List.of("-cp", classPath, LoadApp.class.getName()));
      c.addAll(args);
      return c;
    }

    /**
     * One run of Kafka's ProducerPerformance: {@code records} records of {@code size} bytes, acks=1, as fast as the
     * producer takes them; scenario perf-{size} to {records/s, p50 ms, p99 ms, JVM CPU ns per record}.
     */
    Map<String, long[]> producerPerformance(String variant, String bootstrap, String topic, int size, long records,
        int round) throws Exception {
      boolean agent = List.of("agent", "base", "exempt", "header-exempt").contains(variant);
      List<String> c = new ArrayList<>(command(agent ? "agent" : "none", List.of()));
      if (variant.equals("base")) {
        c.replaceAll(a -> a.startsWith("-javaagent:" + agentJar + "=")
            ? "-javaagent:" + PERF_BASE_AGENT + a.substring(("-javaagent:" + agentJar).length()) : a);
      }
      // command() ends with -cp <app class path> LoadApp: run ProducerPerformance on the bench class path instead.
      c.subList(c.size() - 3, c.size()).clear();
      if (variant.endsWith("exempt")) {
        c.add("-Dfencing.exempt.kafka=" + topic);
      }
      if (headerForm(variant) != null) {
        c.add("-Dbench.perf.header-form=" + headerForm(variant)); // read by FencingHeaderInterceptor
      }
      for (String a : PERF_JVM_ARGS.split(" ")) {
        if (!a.isBlank()) {
          c.add(a.replace("%v", variant + "-" + size + "-" + round));
        }
      }
      c.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.apache.kafka.tools.ProducerPerformance",
          "--topic", topic, "--num-records", Long.toString(records), "--record-size", Integer.toString(size),
          "--throughput", "-1", "--producer-props", "bootstrap.servers=" + bootstrap, "acks=1"));
      if (variant.startsWith("header")) {
        c.add("interceptor.classes=" + FencingHeaderInterceptor.class.getName());
      }
      for (String prop : PERF_PRODUCER_PROPS.split(",")) {
        if (!prop.isBlank()) {
          c.add(prop.strip());
        }
      }
      Path log = Files.createTempFile("load-bench", ".log");
      Process p = new ProcessBuilder(c).redirectError(log.toFile()).start();
      try {
        // The JVM's CPU time, sampled while it runs (gone once it exited): its last sample, 0.2 s before the end at most.
        long[] cpuSeen = new long[1];
        Thread sampler = new Thread(() -> {
          while (p.isAlive()) {
            p.info().totalCpuDuration().ifPresent(d -> cpuSeen[0] = d.toNanos());
            try {
              Thread.sleep(200);
            } catch (InterruptedException e) {
              return;
            }
          }
        });
        sampler.setDaemon(true);
        sampler.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        boolean exited = p.waitFor(300, TimeUnit.SECONDS);
        sampler.join();
        long cpu = cpuSeen[0];
        if (!exited || p.exitValue() != 0) {
          throw new IllegalStateException("ProducerPerformance failed (" + variant + "): " + String.join(" ", c)
              + "\n" + out + Files.readString(log));
        }
        // The last line: "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency, P ms 50th,
        // Q ms 95th, R ms 99th, S ms 99.9th."
        String last = out.lines().filter(l -> l.contains(" 50th")).reduce((a, b) -> b).orElseThrow(
            () -> new IllegalStateException("no summary line from ProducerPerformance:\n" + out));
        String[] f = last.split("[ ,()]+");
        long perSecond = Math.round(Double.parseDouble(f[3]));
        long p50 = Long.parseLong(f[15]);
        long p99 = Long.parseLong(f[21]);
        System.err.println("  " + variant + " perf-" + size + " " + last + (cpu > 0 ? " cpu " + cpu / 1_000_000
            + " ms" : ""));
        return Map.of("perf-" + size, new long[] {perSecond, p50, p99, cpu / Math.max(1, records)});
      } finally {
        p.destroyForcibly();
        Files.deleteIfExists(log);
      }
    }

    /** Scenario to {ops/s, p50 µs, p99 µs, CPU ns of the whole JVM per op}. */
    Map<String, long[]> run(String variant, List<String> args) throws Exception {
      List<String> command = command(variant, args);
      Path log = Files.createTempFile("load-bench", ".log");
      Process p = new ProcessBuilder(command).redirectError(log.toFile()).start();
      try {
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
          throw new IllegalStateException("load app failed (" + variant + "): " + String.join(" ", command) + "\n"
              + out + Files.readString(log));
        }
        Map<String, long[]> m = new LinkedHashMap<>();
        if (Boolean.getBoolean("bench.threads")) {
          // The app's per-thread CPU and allocation lines (LoadApp's -Dbench.threads), for a profile of each run.
          out.lines().filter(l -> l.startsWith("  thread ") || l.startsWith("  alloc ") || l.startsWith("threads "))
              .forEach(l -> System.err.println("  " + variant + " " + l.strip()));
        }
        out.lines().filter(l -> l.startsWith("result ")).forEach(l -> {
          String[] f = l.split(" ");
          m.put(f[1], new long[] {Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]),
              Long.parseLong(f[5])});
          System.err.println("  " + variant + " " + l.substring(7));
        });
        return m;
      } finally {
        p.destroyForcibly();
        Files.deleteIfExists(log);
      }
    }

    static String appClassPath() throws Exception {
      List<String> cp = new ArrayList<>();
      cp.add(Path.of(LoadApp.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
      for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
        String name = Path.of(e).getFileName().toString();
        if (APP_LIBS.stream().anyMatch(name::startsWith)) {
          cp.add(e);
        }
      }
      return String.join(File.pathSeparator, cp);
    }
  }

  /**
   * Per variant and scenario, each round's {ops/s, p50, p99, CPU ns/op}. Absolute values are medians over rounds;
   * ratios are paired: the median over rounds of (variant / no agent) within the same round, with their min and max,
   * because on this shared machine the rounds drift more than the differences measured.
   */
  static final class Results {
    final int rounds;
    final Map<String, Map<String, long[][]>> byVariant = new LinkedHashMap<>();

    Results(int rounds) {
      this.rounds = rounds;
    }

    void add(int round, String variant, Map<String, long[]> result) {
      result.forEach((s, v) -> byVariant.computeIfAbsent(variant, k -> new LinkedHashMap<>())
          .computeIfAbsent(s, k -> new long[rounds][])[round] = v);
    }

    private long[][] values(String variant, String scenario) {
      return byVariant.getOrDefault(variant, Map.of()).get(scenario);
    }

    double median(String variant, String scenario, int metric) {
      long[][] rs = values(variant, scenario);
      if (rs == null) {
        return Double.NaN;
      }
      return median(Arrays.stream(rs).filter(x -> x != null).mapToDouble(x -> x[metric]).toArray());
    }

    /** "median (min–max)" of the per-round ratios a/b, or "-". */
    String pairedRatio(String va, String sa, String vb, String sb, int metric) {
      long[][] a = values(va, sa);
      long[][] b = values(vb, sb);
      if (a == null || b == null) {
        return "-";
      }
      double[] q = new double[rounds];
      int n = 0;
      for (int r = 0; r < rounds; r++) {
        if (a[r] != null && b[r] != null && b[r][metric] > 0) {
          q[n++] = a[r][metric] / (double) b[r][metric];
        }
      }
      if (n == 0) {
        return "-";
      }
      double[] d = Arrays.copyOf(q, n);
      Arrays.sort(d);
      return String.format(Locale.ROOT, "%.3f (%.2f–%.2f)", median(d), d[0], d[n - 1]);
    }

    private static double median(double[] v) {
      double[] s = v.clone();
      Arrays.sort(s);
      return s.length == 0 ? Double.NaN
          : s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
    }

    void table(List<String> scenarios) {
      table(scenarios, "µs");
    }

    /** The table, its latency rows labelled in {@code latencyUnit} (what the scenarios' p50 and p99 hold). */
    void table(List<String> scenarios, String latencyUnit) {
      System.out.println("| scenario | metric | no agent | agent | agent / no agent | OTel agent | OTel / no agent |");
      System.out.println("|---|---|---:|---:|---:|---:|---:|");
      // JVM CPU: the app's whole process (app, agent, JIT and GC threads) over the measured window, per operation;
      // what the agent costs in CPU, apart from how the 2 cores are shared with the server, broker or database.
      String[] metrics = {"ops/s", "p50 (" + latencyUnit + ")", "p99 (" + latencyUnit + ")", "JVM CPU (ns/op)"};
      for (String s : scenarios) {
        for (int m = 0; m < metrics.length; m++) {
          System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", s, metrics[m],
              f(median("none", s, m)), f(median("agent", s, m)), pairedRatio("agent", s, "none", s, m),
              f(median("otel", s, m)), pairedRatio("otel", s, "none", s, m));
        }
      }
      System.out.println("rounds (ops/s): " + byVariant.entrySet().stream().map(e -> e.getKey() + " "
          + e.getValue().entrySet().stream().map(x -> x.getKey() + "=" + Arrays.stream(x.getValue())
              .map(v -> v == null ? "-" : Long.toString(v[0])).collect(Collectors.joining("/")))
              .collect(Collectors.joining(" "))).collect(Collectors.joining("; ")));
    }

    private static String f(double v) {
      return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.0f", v);
    }
  }
}
