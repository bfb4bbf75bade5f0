package dev.fencing.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Startup and footprint of a hello-world JVM with and without the agent, alternating A/B in one run per Java version:
 * start-to-main, start-to-exit, the agent's premain time (/status premainMicros), RSS and threads of a JVM idling
 * after start. The agent points at an etcd endpoint where nothing listens: startup must not wait for it.
 *
 * <p>Usage: StartupBench &lt;agent jar&gt; &lt;rounds&gt; &lt;java home&gt;...
 */
public final class StartupBench {
  private static final Pattern PREMAIN = Pattern.compile("\"premainMicros\":(\\d+)");
  /** An idling JVM is sampled this long after main started: the agent's threads start asynchronously. */
  private static final long SETTLE_MILLIS = 3000;

  private StartupBench() {}

  public static void main(String[] args) throws Exception {
    Path agentJar = Path.of(args[0]);
    int rounds = Integer.parseInt(args[1]);
    // Only Hello's own directory: the hello-world app must not see the agent core's classes on its class path.
    String classPath = Path.of(Hello.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    System.out.println("| Java | metric | no agent (median) | agent (median) | added | ratio |");
    System.out.println("|---|---|---:|---:|---:|---:|");
    for (int i = 2; i < args.length; i++) {
      Path java = Path.of(args[i], "bin", "java");
      if (!Files.isExecutable(java)) {
        throw new IllegalStateException(java + " not found: install that JDK or pass another java home");
      }
      run(java, agentJar, classPath, rounds);
    }
  }

  private static void run(Path java, Path agentJar, String classPath, int rounds) throws Exception {
    String version = javaVersion(java);
    long[][] toMain = new long[2][rounds];
    long[][] toExit = new long[2][rounds];
    long[][] rss = new long[2][rounds];
    long[][] threads = new long[2][rounds];
    long[] premain = new long[rounds];
    // One warm-up pair (page cache, CDS archive mapping) before measuring.
    exitRun(java, agentJar, classPath, false);
    exitRun(java, agentJar, classPath, true);
    for (int r = 0; r < rounds; r++) {
      for (int a = 0; a < 2; a++) { // A/B alternating
        long[] t = exitRun(java, agentJar, classPath, a == 1);
        toMain[a][r] = t[0];
        toExit[a][r] = t[1];
      }
    }
    for (int r = 0; r < rounds; r++) {
      for (int a = 0; a < 2; a++) {
        long[] f = idleRun(java, agentJar, classPath, a == 1);
        rss[a][r] = f[0];
        threads[a][r] = f[1];
        if (a == 1) {
          premain[r] = f[2];
        }
      }
    }
    row(version, "start-to-main (ms)", toMain, 1000.0);
    row(version, "start-to-exit (ms)", toExit, 1000.0);
    System.out.printf(Locale.ROOT, "| %s | premain (ms) | - | %.1f | %.1f | - |%n", version, median(premain) / 1000.0,
        median(premain) / 1000.0);
    row(version, "RSS idle (MB)", rss, 1024.0);
    row(version, "threads idle", threads, 1.0);
    System.out.flush();
  }

  private static void row(String version, String metric, long[][] values, double divisor) {
    double a = median(values[0]) / divisor;
    double b = median(values[1]) / divisor;
    System.out.printf(Locale.ROOT, "| %s | %s | %.1f | %.1f | %+.1f | %.2f |%n", version, metric, a, b, b - a, b / a);
  }

  private static double median(long[] v) {
    long[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
  }

  private static List<String> command(Path java, Path agentJar, String classPath, boolean agent, int statusPort,
      String mode) throws IOException {
    List<String> c = new ArrayList<>();
    c.add(java.toString());
    if (agent) {
      c.add("-javaagent:" + agentJar);
      c.add("-Dfencing.lock=bench-startup");
      c.add("-Dfencing.etcd.endpoints=http://127.0.0.1:" + freePort()); // nothing listens there
      if (statusPort > 0) {
        c.add("-Dfencing.http.port=" + statusPort);
      }
    }
    c.add("-cp");
    c.add(classPath);
    c.add(Hello.class.getName());
    if (mode != null) {
      c.add(mode);
    }
    return c;
  }

  /** Returns {start-to-main, start-to-exit} in microseconds. */
  private static long[] exitRun(Path java, Path agentJar, String classPath, boolean agent) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command(java, agentJar, classPath, agent, 0, null))
        .redirectError(ProcessBuilder.Redirect.DISCARD);
    Instant wallStart = Instant.now();
    long start = System.nanoTime();
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("hello-world JVM did not exit within 60 s");
    }
    long exit = (System.nanoTime() - start) / 1000;
    if (p.exitValue() != 0 || !out.contains("hello, world")) {
      throw new IllegalStateException("hello-world JVM failed (exit " + p.exitValue() + "): " + out);
    }
    long mainAt = Long.parseLong(out.lines().filter(l -> l.startsWith("main-at ")).findFirst().orElseThrow()
        .substring("main-at ".length()));
    long wallStartMicros = wallStart.getEpochSecond() * 1_000_000L + wallStart.getNano() / 1000;
    return new long[] {mainAt - wallStartMicros, exit};
  }

  /** Returns {VmRSS kB, threads, premain micros (agent only)} of a JVM idling after main. */
  private static long[] idleRun(Path java, Path agentJar, String classPath, boolean agent) throws Exception {
    int port = agent ? freePort() : 0;
    Path log = Files.createTempFile("startup-bench", ".log");
    List<String> command = command(java, agentJar, classPath, agent, port, "idle");
    Process p = new ProcessBuilder(command).redirectError(log.toFile()).start();
    try {
      BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = r.readLine()) != null && !line.equals("hello, world")) {
        // skip main-at
      }
      if (line == null) {
        throw new IllegalStateException("idle JVM exited early (exit " + p.waitFor() + ")");
      }
      Thread.sleep(SETTLE_MILLIS);
      long rss = 0;
      long threads = 0;
      for (String s : Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status"))) {
        if (s.startsWith("VmRSS:")) {
          rss = Long.parseLong(s.replaceAll("\\D", ""));
        } else if (s.startsWith("Threads:")) {
          threads = Long.parseLong(s.replaceAll("\\D", ""));
        }
      }
      long premain = 0;
      if (agent) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        String body;
        try {
          body = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/status"))
              .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
          throw new IllegalStateException("no /status from " + command + "; its stderr: " + Files.readString(log), e);
        }
        Matcher m = PREMAIN.matcher(body);
        if (!m.find()) {
          throw new IllegalStateException("no premainMicros in /status: " + body);
        }
        premain = Long.parseLong(m.group(1));
      }
      return new long[] {rss, threads, premain};
    } finally {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      Files.deleteIfExists(log);
    }
  }

  private static String javaVersion(Path java) throws Exception {
    Process p = new ProcessBuilder(java.toString(), "-version").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor();
    Matcher m = Pattern.compile("version \"([^\"]+)\"").matcher(out);
    return m.find() ? m.group(1) : java.toString();
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
