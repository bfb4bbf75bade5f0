package dev.fencing.bench;

import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.SpringApp;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The spring part of scripts/bench.sh: startup of a realistic Spring Boot service (sample-apps/spring-replicas: JPA,
 * Hibernate, HikariCP on PostgreSQL, Tomcat, Actuator, validation, Jackson; ~14,000 classes without an agent) with
 * no agent, with this agent holding a real etcd lease, and with the OpenTelemetry Java agent, in rounds with a
 * rotating order. Per run: Spring's own "Started ... in X seconds", the time from launching the JVM to the first
 * HTTP 200 of GET /orders, the process's CPU time (user + system) at that moment, its RSS and the classes loaded.
 * Absolute values are medians over rounds; ratios are paired per round (variant / no agent in the same round).
 *
 * <p>Arguments: agent jar, OpenTelemetry agent jar, rounds, Java home, and optionally a second agent jar (another
 * build of this agent, e.g. main's) that runs as a fourth variant in the same rounds, so two builds are compared
 * paired per round on the same machine state. System property {@code bench.agent-options}: agent options appended
 * to both agent variants' (e.g. {@code log.level=debug}, whose transformer counters are then printed per run);
 * {@code bench.base-options}: options appended to the fourth variant's only, which then also runs without a second
 * jar (this jar with other options, e.g. {@code instrumentation.class-loaders.enabled=false}, in the same rounds);
 * {@code bench.jvm-args}: JVM options for every variant, for profiles ({@code %v}: variant and round).
 */
public final class SpringBench {
  private static final String[] ALL_VARIANTS = {"none", "agent", "otel", "base"};
  private static final String[] METRICS = {"started in (s)", "first 200 (ms)", "CPU to first 200 (ms)",
      "RSS after start (MB)", "classes loaded", "launch before Spring's clock (ms)"};
  private static final int RSS = 3;
  /** Agent options of the fourth variant only ({@code bench.base-options}); empty for none. */
  private static final String BASE_OPTIONS = System.getProperty("bench.base-options", "");

  private SpringBench() {}

  public static void main(String[] args) throws Exception {
    Path agentJar = Path.of(args[0]);
    Path otelJar = Path.of(args[1]);
    int rounds = Integer.parseInt(args[2]);
    Path javaHome = Path.of(args[3]);
    Path baseJar = args.length > 4 && !args[4].isEmpty() ? Path.of(args[4])
        : BASE_OPTIONS.isEmpty() ? null : agentJar;
    String[] variants = Arrays.copyOf(ALL_VARIANTS, baseJar == null ? 3 : 4);
    List<Path> needed = new ArrayList<>(List.of(agentJar, otelJar, SpringApp.fatJar()));
    if (baseJar != null) {
      needed.add(baseJar);
    }
    for (Path p : needed) {
      if (!Files.isRegularFile(p)) {
        throw new IllegalStateException(p + " is missing: build it first (scripts/bench.sh builds all three)");
      }
    }
    // [variant][round][metric]
    double[][][] r = new double[variants.length][rounds][];
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < variants.length; k++) {
          int v = (k + round) % variants.length; // rotating order: each variant goes first in some round
          r[v][round] = runOnce(variants[v], round, javaHome, v == 3 ? baseJar : agentJar, otelJar, etcd.endpoints(),
              pg);
          System.err.printf(Locale.ROOT, "round %d %-5s %s%n", round + 1, variants[v], Arrays.toString(r[v][round]));
        }
      }
    }
    System.out.println("Spring Boot startup (sample-apps/spring-replicas, java -jar, " + javaHome.getFileName()
        + "); medians of " + rounds + " rotating rounds, ratios paired per round, median (min-max):");
    System.out.println();
    System.out.println("| metric | no agent | this agent | ratio | OpenTelemetry agent | ratio |");
    System.out.println("|---|---:|---:|---:|---:|---:|");
    for (int m = 0; m < METRICS.length; m++) {
      System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s |%n", METRICS[m],
          f(RoundStats.median(r, 0, m), m), f(RoundStats.median(r, 1, m), m), ratio(r, 1, m),
          f(RoundStats.median(r, 2, m), m), ratio(r, 2, m));
    }
    System.out.println();
    System.out.printf(Locale.ROOT, "Added RSS after start: this agent %+.0f MB, OpenTelemetry agent %+.0f MB "
        + "(medians of the per-round differences)%n", RoundStats.median(RoundStats.differences(r, 1, RSS)),
        RoundStats.median(RoundStats.differences(r, 2, RSS)));
    if (baseJar != null) {
      System.out.println();
      System.out.println("Against the fourth variant (" + baseJar + (BASE_OPTIONS.isEmpty() ? "" : ", options "
          + BASE_OPTIONS) + ") in the same rounds:");
      System.out.println();
      System.out.println("| metric | no agent | this agent | ratio | fourth variant | ratio | this ÷ fourth |");
      System.out.println("|---|---:|---:|---:|---:|---:|---:|");
      for (int m = 0; m < METRICS.length; m++) {
        System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", METRICS[m],
            f(RoundStats.median(r, 0, m), m), f(RoundStats.median(r, 1, m), m), ratio(r, 1, m),
            f(RoundStats.median(r, 3, m), m), ratio(r, 3, m), ratio(r, 1, 3, m));
      }
    }
  }

  private static double[] runOnce(String variant, int round, Path javaHome, Path agentJar, Path otelJar,
      String endpoints, PostgresServer pg) throws IOException, InterruptedException {
    String agentArgs = null;
    List<String> jvmArgs = new ArrayList<>();
    String extra = System.getProperty("bench.jvm-args", "").trim();
    if (!extra.isEmpty()) {
      // For profiles (-Xlog:class+load, JFR), the same in every variant; %v in them is the variant's name.
      for (String a : extra.split("\\s+")) {
        jvmArgs.add(a.replace("%v", variant + "-" + round));
      }
    }
    String options = System.getProperty("bench.agent-options", "");
    if (variant.equals("agent") || variant.equals("base")) {
      agentArgs = "lock=spring-bench-" + variant + "-" + round + ",etcd.endpoints=" + endpoints + ",http.port=0"
          + (options.isEmpty() ? "" : "," + options);
      if (variant.equals("base") && !BASE_OPTIONS.isEmpty()) {
        agentArgs += "," + BASE_OPTIONS;
      }
    } else if (variant.equals("otel")) {
      jvmArgs.addAll(List.of("-javaagent:" + otelJar, "-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none",
          "-Dotel.logs.exporter=none", "-Dotel.javaagent.logging=none", "-Dotel.service.name=bench"));
    }
    try (SpringApp app = SpringApp.start(javaHome, agentJar, "bench-" + variant, pg.jdbcUrl(), pg.user(), agentArgs,
        Duration.ofSeconds(180), jvmArgs.toArray(String[]::new))) {
      long pid = app.jvm().pid();
      double cpuMs = ProcessHandle.of(pid).flatMap(h -> h.info().totalCpuDuration()).map(Duration::toMillis)
          .orElse(-1L);
      double rssMb = rssKb(pid) / 1024.0;
      if (Boolean.getBoolean("bench.thread-cpu")) {
        System.err.println("round " + (round + 1) + " " + variant + " CPU by thread (ms): " + threadCpu(pid));
      }
      double classes = loadedClasses(javaHome, pid, "round " + (round + 1) + " " + variant);
      String output = app.jvm().output();
      if (agentArgs != null && !agentArgs.contains("lease.enabled=false") && !output.contains("holding lock")) {
        throw new IllegalStateException("the agent run did not hold its lease:\n" + output);
      }
      if (agentArgs != null) {
        // At log.level=debug: the transformer's last counters before the first 200.
        String last = null;
        for (String line : output.split("\n")) {
          if (line.contains("transformer: ")) {
            last = line.substring(line.indexOf("transformer: "));
          }
        }
        if (last != null) {
          System.err.println("round " + (round + 1) + " " + variant + " " + last);
        }
      }
      return new double[] {app.startedInSeconds(), app.firstOkMillis(), cpuMs, rssMb, classes, app.launchMillis()};
    }
  }

  /**
   * CPU time per thread name (Linux's 15-character names, numbers folded to #) at this moment, most first: where the
   * process's CPU went up to the first 200 (bench.thread-cpu=true).
   */
  private static String threadCpu(long pid) throws IOException {
    java.util.Map<String, Long> byName = new java.util.HashMap<>();
    long tick = 10; // ms per clock tick (USER_HZ 100)
    try (java.util.stream.Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
      for (Path t : (Iterable<Path>) tasks::iterator) {
        String stat;
        try {
          stat = Files.readString(t.resolve("stat"));
        } catch (IOException gone) {
          continue;
        }
        String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replaceAll("[0-9]+", "#");
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long ms = (Long.parseLong(f[11]) + Long.parseLong(f[12])) * tick;
        byName.merge(name, ms, Long::sum);
      }
    }
    StringBuilder b = new StringBuilder();
    byName.entrySet().stream().sorted((x, y) -> Long.compare(y.getValue(), x.getValue())).limit(25)
        .forEach(e -> b.append(e.getKey()).append('=').append(e.getValue()).append(", "));
    return b.toString();
  }

  private static long rssKb(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }

  /** The HotSpot counters (jcmd PerfCounter.print) a profile of the start reads, as ms (bench.thread-cpu=true). */
  private static final String[][] PROFILE_COUNTERS = {
      {"sun.ci.standardTime", "JIT compiling"}, {"sun.ci.osrTime", "JIT compiling loops (OSR)"},
      {"sun.cls.time", "class loading (all)"},
      {"sun.cls.defineAppClassTime.self", "parsing and defining"}, {"sun.cls.classVerifyTime.self", "verifying"},
      {"sun.cls.classLinkedTime.self", "linking"}, {"sun.cls.classInitTime.self", "static initialisers"},
      {"sun.gc.collector.0.time", "young GC pauses"}};

  private static double loadedClasses(Path javaHome, long pid, String run) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(javaHome.resolve("bin/jcmd").toString(), Long.toString(pid), "PerfCounter.print")
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    java.util.Map<String, String> counters = new java.util.HashMap<>();
    for (String line : out.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        counters.put(line.substring(0, eq), line.substring(eq + 1).trim().replace("\"", ""));
      }
    }
    if (Boolean.getBoolean("bench.thread-cpu") && counters.containsKey("sun.os.hrt.frequency")) {
      double ticksPerMs = Double.parseDouble(counters.get("sun.os.hrt.frequency")) / 1000.0;
      StringBuilder b = new StringBuilder("JVM time (ms, all threads):");
      for (String[] c : PROFILE_COUNTERS) {
        String v = counters.get(c[0]);
        if (v != null) {
          b.append(String.format(Locale.ROOT, " %s %.0f,", c[1], Double.parseDouble(v) / ticksPerMs));
        }
      }
      System.err.println(run + " " + b);
    }
    String loaded = counters.get("java.cls.loadedClasses");
    return loaded == null ? Double.NaN : Double.parseDouble(loaded);
  }


  private static String ratio(double[][][] r, int v, int m) {
    return ratio(r, v, 0, m);
  }

  /** Variant {@code v} ÷ variant {@code base}, paired per round: median (min-max). */
  private static String ratio(double[][][] r, int v, int base, int m) {
    double[] x = new double[r[v].length];
    for (int i = 0; i < x.length; i++) {
      x[i] = r[v][i][m] / r[base][i][m];
    }
    Arrays.sort(x);
    return String.format(Locale.ROOT, "%.3f (%.2f-%.2f)", RoundStats.median(x), x[0], x[x.length - 1]);
  }


  private static String f(double v, int metric) {
    return String.format(Locale.ROOT, metric == 0 ? "%.2f" : "%.0f", v);
  }
}
