package dev.fencing.bench;

import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.KafkaBroker;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The load parts of the benchmark: the same {@link LoadApp} launched with no agent, with ours (holding a real lease
 * from a real single-node etcd, so every side effect is tagged) and with the OpenTelemetry Java agent (exporters off:
 * its instrumentation and span creation, no network), alternating in rounds; medians per variant and scenario, ratios
 * against no agent.
 *
 * <p>Usage: LoadBench pg|clients|kafka &lt;agent jar&gt; &lt;OpenTelemetry agent jar&gt; &lt;rounds&gt; &lt;java home&gt;
 */
public final class LoadBench {
  /** Library jars the forked app needs, by file name prefix; the rest of the bench class path stays out of it. */
  private static final List<String> APP_LIBS = List.of("postgresql-", "okhttp-", "okio", "kotlin-stdlib",
      "httpclient5-", "httpcore5-", "kafka-clients-", "lz4-java-", "snappy-java-", "zstd-jni-", "slf4j-api-");
  private static final String[] VARIANTS = {"none", "agent", "otel"};
  private static final long WARM = Long.getLong("bench.warm", 3);
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
          pg(new Launcher(java, agentJar, otelJar, etcd.endpoints(), "bench-pg", ""), rounds);
          break;
        case "clients":
          clients(new Launcher(java, agentJar, otelJar, etcd.endpoints(), "bench-http", ""), rounds);
          break;
        case "kafka":
          kafka(new Launcher(java, agentJar, otelJar, etcd.endpoints(), "bench-kafka", ""), rounds);
          break;
        default:
          throw new IllegalArgumentException("unknown part " + part);
      }
    }
  }

  private static void pg(Launcher launcher, int rounds) throws Exception {
    try (PostgresServer pg = PostgresServer.start()) {
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
        for (String t : List.of("bench_plain", "bench_fenced")) {
          s.execute("CREATE TABLE " + t + " (id INT PRIMARY KEY, v BIGINT NOT NULL)");
          s.execute("INSERT INTO " + t + " SELECT g, 0 FROM generate_series(1, 8) g");
        }
        // The same lock as the agent's: the fence checks the session's lock name, then its token.
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("bench_fenced"), launcher.lock, false, false));
      }
      // Without our agent, writes to the fenced table fail (FN002, no token): those variants run the plain table only.
      Map<String, List<String>> scenarios = new LinkedHashMap<>();
      scenarios.put("none", List.of("bench_plain:1", "bench_plain:4"));
      scenarios.put("agent", List.of("bench_plain:1", "bench_plain:4", "bench_fenced:1", "bench_fenced:4"));
      scenarios.put("otel", List.of("bench_plain:1", "bench_plain:4"));
      Results r = new Results();
      for (int round = 0; round < rounds; round++) {
        for (String v : VARIANTS) {
          List<String> a = new ArrayList<>(List.of("pg", pg.jdbcUrl(), Long.toString(WARM), Long.toString(MEASURE)));
          a.addAll(scenarios.get(v));
          r.add(v, launcher.run(v, a));
        }
      }
      System.out.println("PostgreSQL single-row UPDATE (PreparedStatement, autocommit), loopback; medians of "
          + rounds + " rounds:");
      r.table(List.of("bench_plain:1", "bench_plain:4", "bench_fenced:1", "bench_fenced:4"));
      System.out.println();
      double f1 = r.median("agent", "bench_fenced:1", 0) / r.median("agent", "bench_plain:1", 0);
      double f4 = r.median("agent", "bench_fenced:4", 0) / r.median("agent", "bench_plain:4", 0);
      double s4 = r.median("agent", "bench_fenced:4", 0) / r.median("agent", "bench_fenced:1", 0);
      System.out.printf(Locale.ROOT, "with the agent: fenced/unfenced UPDATE/s, 1 connection %.3f, 4 connections %.3f"
          + " (target >= 0.85); fenced 4 connections / 1 connection (same token) %.2f (target >= 1.5)%n", f1, f4, s4);
    }
  }

  private static void clients(Launcher launcher, int rounds) throws Exception {
    Results r = new Results();
    for (int round = 0; round < rounds; round++) {
      for (String v : VARIANTS) {
        r.add(v, launcher.run(v, List.of("http", Long.toString(WARM), Long.toString(MEASURE), "jdk", "okhttp",
            "apache")));
      }
    }
    System.out.println("HTTP POST to a loopback JDK HttpServer, one client thread; medians of " + rounds + " rounds:");
    r.table(List.of("jdk", "okhttp", "apache"));
  }

  private static void kafka(Launcher launcher, int rounds) throws Exception {
    Map<String, String> retention = Map.of("log.segment.bytes", "67108864", "log.retention.bytes", "134217728",
        "log.retention.check.interval.ms", "5000");
    try (KafkaBroker broker = KafkaBroker.start(retention)) {
      broker.createTopic("bench", 1);
      Results r = new Results();
      for (int round = 0; round < rounds; round++) {
        for (String v : VARIANTS) {
          r.add(v, launcher.run(v, List.of("kafka", broker.bootstrapServers(), "bench", Long.toString(WARM),
              Long.toString(MEASURE))));
        }
      }
      System.out.println("Kafka producer, 1 KB records, acks=1, one partition, broker in a child JVM; medians of "
          + rounds + " rounds:");
      r.table(List.of("kafka-async", "kafka-sync"));
    }
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
      List<String> c = new ArrayList<>(List.of(java.toString(), "-Xmx512m"));
      if (variant.equals("agent")) {
        c.add("-javaagent:" + agentJar + "=lock=" + lock + ",etcd.endpoints=" + endpoints
            + ",standby=wait,standby.timeout=20s" + agentOptions);
      } else if (variant.equals("otel")) {
        c.add("-javaagent:" + otelJar);
        // Instrumentation and spans as in production, no exporter traffic on this machine.
        c.addAll(List.of("-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none",
            "-Dotel.javaagent.logging=none", "-Dotel.service.name=bench"));
      }
      c.addAll(List.of("-cp", classPath, LoadApp.class.getName()));
      c.addAll(args);
      return c;
    }

    /** Scenario to {ops/s, p50 µs, p99 µs}. */
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
        out.lines().filter(l -> l.startsWith("result ")).forEach(l -> {
          String[] f = l.split(" ");
          m.put(f[1], new long[] {Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4])});
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

  /** Per variant and scenario, the rounds' {ops/s, p50, p99}. */
  static final class Results {
    final Map<String, Map<String, List<long[]>>> byVariant = new LinkedHashMap<>();

    void add(String variant, Map<String, long[]> round) {
      round.forEach((s, v) -> byVariant.computeIfAbsent(variant, k -> new LinkedHashMap<>())
          .computeIfAbsent(s, k -> new ArrayList<>()).add(v));
    }

    double median(String variant, String scenario, int metric) {
      List<long[]> rs = byVariant.getOrDefault(variant, Map.of()).get(scenario);
      if (rs == null) {
        return Double.NaN;
      }
      long[] s = rs.stream().mapToLong(x -> x[metric]).sorted().toArray();
      return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
    }

    void table(List<String> scenarios) {
      System.out.println("| scenario | metric | no agent | agent | agent ratio | OTel agent | OTel ratio |");
      System.out.println("|---|---|---:|---:|---:|---:|---:|");
      String[] metrics = {"ops/s", "p50 (µs)", "p99 (µs)"};
      for (String s : scenarios) {
        for (int m = 0; m < 3; m++) {
          double none = median("none", s, m);
          double agent = median("agent", s, m);
          double otel = median("otel", s, m);
          System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", s, metrics[m], f(none), f(agent),
              ratio(agent, none), f(otel), ratio(otel, none));
        }
      }
      System.out.println("rounds (ops/s): " + byVariant.entrySet().stream().map(e -> e.getKey() + " "
          + e.getValue().entrySet().stream().map(x -> x.getKey() + "=" + x.getValue().stream()
              .map(v -> Long.toString(v[0])).collect(Collectors.joining("/")))
              .collect(Collectors.joining(" "))).collect(Collectors.joining("; ")));
    }

    private static String f(double v) {
      return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.0f", v);
    }

    private static String ratio(double a, double b) {
      return Double.isNaN(a) || Double.isNaN(b) ? "-" : String.format(Locale.ROOT, "%.3f", a / b);
    }
  }
}
