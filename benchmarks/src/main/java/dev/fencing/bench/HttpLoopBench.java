package dev.fencing.bench;

import dev.fencing.testing.EtcdCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * HTTP POST loop (JDK HttpClient → loopback JDK HttpServer, one thread) with and without the agent, alternating A/B
 * in one run. The agent holds a real lease from a real single-node etcd, so every POST takes the tag path.
 *
 * <p>Usage: HttpLoopBench &lt;agent jar&gt; &lt;rounds&gt; &lt;java home&gt;
 */
public final class HttpLoopBench {
  private HttpLoopBench() {}

  public static void main(String[] args) throws Exception {
    Path agentJar = Path.of(args[0]);
    int rounds = Integer.parseInt(args[1]);
    Path java = Path.of(args[2], "bin", "java");
    String classPath = Path.of(HttpLoop.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    EtcdCluster etcd = EtcdCluster.single();
    etcd.start();
    try {
      etcd.awaitHealthy(Duration.ofSeconds(20));
      long[][] rps = new long[2][rounds];
      long[][] p50 = new long[2][rounds];
      long[][] p99 = new long[2][rounds];
      for (int r = 0; r < rounds; r++) {
        for (int a = 0; a < 2; a++) {
          long[] m = once(java, agentJar, classPath, a == 1, etcd.endpoints(), r);
          rps[a][r] = m[0];
          p50[a][r] = m[1];
          p99[a][r] = m[2];
        }
      }
      System.out.println("| metric | no agent (median) | agent (median) | ratio |");
      System.out.println("|---|---:|---:|---:|");
      row("POST/s", rps);
      row("p50 (µs)", p50);
      row("p99 (µs)", p99);
    } finally {
      etcd.stop();
    }
  }

  private static long[] once(Path java, Path agentJar, String classPath, boolean agent, String endpoints, int round)
      throws Exception {
    List<String> c = new ArrayList<>();
    c.add(java.toString());
    if (agent) {
      c.add("-javaagent:" + agentJar);
      c.add("-Dfencing.lock=bench-http-" + round); // a fresh lock per run: no waiting for the previous holder's TTL
      c.add("-Dfencing.etcd.endpoints=" + endpoints);
      c.add("-Dfencing.standby=wait"); // the first POSTs wait for the lease instead of failing
    }
    c.addAll(List.of("-cp", classPath, HttpLoop.class.getName(), "3", "5"));
    Path log = Files.createTempFile("http-loop", ".log");
    try {
      Process p = new ProcessBuilder(c).redirectError(log.toFile()).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IllegalStateException("HTTP loop failed: " + out + Files.readString(log));
      }
      String line = out.lines().filter(l -> l.startsWith("result ")).findFirst().orElseThrow();
      return Arrays.stream(line.substring(7).split(" ")).mapToLong(Long::parseLong).toArray();
    } finally {
      Files.deleteIfExists(log);
    }
  }

  private static void row(String metric, long[][] v) {
    double a = median(v[0]);
    double b = median(v[1]);
    System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f | %.3f |%n", metric, a, b, b / a);
  }

  private static double median(long[] v) {
    long[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
  }
}
