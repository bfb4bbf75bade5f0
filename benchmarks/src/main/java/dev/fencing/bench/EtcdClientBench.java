package dev.fencing.bench;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.lease.EtcdLeaseProvider;
import dev.fencing.agent.lease.LeaseProvider;
import dev.fencing.testing.EtcdCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What holding an etcd lock costs a JVM that has just started, by client: the steps the agent's lease keeper takes
 * before its first HOLDING (cluster id, lease grant, election campaign, read of the lock key's create revision, one
 * keep-alive), each in a fresh JVM, against a real single-node etcd. Variants, in rotating order per round:
 * {@code none} (the same JVM doing nothing), {@code jetcd} (the agent's own {@link EtcdLeaseProvider}: jetcd, gRPC,
 * Netty, Vert.x, protobuf, Guava), {@code gateway} (the same five calls to etcd's JSON gateway, {@code /v3/...}, which
 * etcd serves on its client port, over the JDK's {@link HttpClient}, HTTP/1.1) and {@code socket} (the same calls as
 * HTTP/1.0 over a plain socket). The last two are transports the agent does not have: they measure how much of the
 * lease stack's startup cost is the client's rather than etcd's (BENCHMARKS.md 9b).
 *
 * <p>Per JVM: wall time from launch to the lock held (the parent's clock, from spawning the child to its line),
 * process CPU (user + system, /proc) and RSS at that moment, classes loaded until then ({@code -Xlog:class+load}).
 *
 * <p>Usage: EtcdClientBench &lt;rounds&gt; &lt;java home&gt;
 */
public final class EtcdClientBench {
  private static final String[] VARIANTS = {"none", "jetcd", "gateway", "socket"};
  private static final String[] METRICS = {"launch to lock held (ms)", "CPU until then (ms)", "RSS then (MB)",
      "classes loaded"};
  /** Each child campaigns for a lock of its own: a halted child's lease would hold a shared one for its TTL. */
  private static final String LOCK = "etcd-client-bench-";
  private static final Pattern NUMBER = Pattern.compile("\"%s\":\"?(\\d+)\"?");

  private EtcdClientBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("child")) {
      child(args[1], args[2], args[3]);
      return;
    }
    int rounds = Integer.parseInt(args[0]);
    Path java = Path.of(args[1], "bin", "java");
    String cp = System.getProperty("java.class.path");
    Path logs = Files.createTempDirectory("etcd-client-bench");
    double[][][] r = new double[VARIANTS.length][rounds][];
    try (EtcdCluster etcd = EtcdCluster.single()) {
      String endpoint = etcd.endpoints().split(",")[0];
      for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < VARIANTS.length; k++) {
          int v = (k + round) % VARIANTS.length;
          r[v][round] = runOnce(java, cp, VARIANTS[v], endpoint, logs.resolve(VARIANTS[v] + "-" + round + ".log"),
              "holder-" + round + "-" + v);
          System.err.printf(Locale.ROOT, "round %d %-7s %s%n", round + 1, VARIANTS[v], Arrays.toString(r[v][round]));
        }
      }
    }
    System.out.println("Holding an etcd lock from a fresh JVM (" + java + "), medians of " + rounds
        + " rotating rounds; added = variant - none, paired per round, median (min-max):");
    System.out.println();
    System.out.println("| metric | none | jetcd (the agent's) | added | JSON gateway, JDK HttpClient | added "
        + "| JSON gateway, plain socket | added |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (int m = 0; m < METRICS.length; m++) {
      System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f | %s | %.0f | %s | %.0f | %s |%n", METRICS[m],
          RoundStats.median(r, 0, m), RoundStats.median(r, 1, m), added(r, 1, m), RoundStats.median(r, 2, m),
          added(r, 2, m), RoundStats.median(r, 3, m), added(r, 3, m));
    }
  }

  private static double[] runOnce(Path java, String cp, String variant, String endpoint, Path classLog,
      String holder) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(java.toString(), "-Xlog:class+load=info:file=" + classLog,
        "-Dbench.class-log=" + classLog, "-cp", cp, EtcdClientBench.class.getName(), "child", variant, endpoint, holder));
    long start = System.nanoTime();
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String line;
    String result = null;
    StringBuilder output = new StringBuilder();
    long heldNanos = 0;
    try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      while ((line = in.readLine()) != null) {
        if (line.startsWith("held ")) {
          heldNanos = System.nanoTime() - start;
          result = line;
        } else {
          output.append(line).append('\n');
        }
      }
    }
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0 || result == null) {
      p.destroyForcibly();
      throw new IllegalStateException(variant + " failed (exit " + (p.isAlive() ? "-" : p.exitValue()) + "):\n"
          + output);
    }
    // "held <cpu ms> <rss kB> <classes loaded by then>"
    String[] f = result.split(" ");
    return new double[] {heldNanos / 1e6, Double.parseDouble(f[1]), Double.parseDouble(f[2]) / 1024,
        Double.parseDouble(f[3])};
  }

  // ---- the child JVM ----

  private static void child(String variant, String endpoint, String holder) throws Exception {
    switch (variant) {
      case "none":
        break;
      case "jetcd":
        viaJetcd(endpoint, holder);
        break;
      case "gateway":
        viaGateway(endpoint, holder, (path, body) -> postRaw(http(), endpoint, path, body));
        break;
      case "socket":
        viaGateway(endpoint, holder, (path, body) -> postOverSocket(endpoint, path, body));
        break;
      default:
        throw new IllegalArgumentException("variant " + variant + ": expected one of " + Arrays.toString(VARIANTS));
    }
    // Read before printing: what the JVM had spent by the moment the lock was held.
    long cpu = cpuMillis();
    long rss = rssKb();
    long classes = loadedClasses();
    System.out.println("held " + cpu + " " + rss + " " + classes);
    System.out.flush();
    Runtime.getRuntime().halt(0); // jetcd's client would give the lease back at exit: not part of the measurement
  }

  private static void viaJetcd(String endpoint, String holder) throws Exception {
    AgentConfig config = ConfigLoader.load("lock=" + LOCK + holder + ",etcd.endpoints=" + endpoint + ",holder.id=" + holder);
    if (!config.valid()) {
      throw new IllegalStateException("config: " + config.problems());
    }
    Duration timeout = Duration.ofSeconds(10);
    LeaseProvider provider = new EtcdLeaseProvider(config);
    provider.clusterId(timeout);
    LeaseProvider.Lease lease = provider.grant(Duration.ofSeconds(10), timeout);
    LeaseProvider.Acquired acquired = provider.campaign(LOCK + holder, lease.id, holder).get(30, TimeUnit.SECONDS);
    provider.keepAlive(lease.id).get(10, TimeUnit.SECONDS);
    if (acquired.token <= 0) {
      throw new IllegalStateException("no token from jetcd");
    }
  }

  /** The same calls to etcd's JSON gateway (grpc-gateway; int64 fields are JSON strings, bytes are base64). */
  private static void viaGateway(String endpoint, String holder, Gateway gateway) throws Exception {
    Base64.Encoder b64 = Base64.getEncoder();
    post(gateway, "/v3/cluster/member/list", "{}", "cluster_id");
    long leaseId = post(gateway, "/v3/lease/grant", "{\"TTL\":10}", "ID");
    String campaign = gateway.post("/v3/election/campaign", "{\"name\":\""
        + b64.encodeToString(("/fencing/locks/" + LOCK + holder).getBytes(StandardCharsets.UTF_8)) + "\",\"lease\":" + leaseId
        + ",\"value\":\"" + b64.encodeToString(holder.getBytes(StandardCharsets.UTF_8)) + "\"}");
    Matcher key = Pattern.compile("\"key\":\"([^\"]+)\"").matcher(campaign);
    if (!key.find()) {
      throw new IllegalStateException("campaign answered without a leader key: " + campaign);
    }
    long token = post(gateway, "/v3/kv/range", "{\"key\":\"" + key.group(1) + "\"}", "create_revision");
    post(gateway, "/v3/lease/keepalive", "{\"ID\":" + leaseId + "}", "TTL");
    if (token <= 0) {
      throw new IllegalStateException("no token from the gateway");
    }
  }

  /** One POST of a JSON body to etcd's gateway; the answer's body. */
  private interface Gateway {
    String post(String path, String body) throws IOException, InterruptedException;
  }

  private static HttpClient http;

  private static HttpClient http() {
    if (http == null) {
      http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    }
    return http;
  }

  private static long post(Gateway gateway, String path, String body, String field)
      throws IOException, InterruptedException {
    String answer = gateway.post(path, body);
    Matcher m = Pattern.compile(String.format(Locale.ROOT, NUMBER.pattern(), field)).matcher(answer);
    if (!m.find()) {
      throw new IllegalStateException(path + " answered without " + field + ": " + answer);
    }
    return Long.parseUnsignedLong(m.group(1)); // cluster ids are uint64
  }

  private static String postRaw(HttpClient http, String endpoint, String path, String body)
      throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(endpoint + path))
        .timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException(path + ": HTTP " + r.statusCode() + " " + r.body());
    }
    return r.body();
  }

  /**
   * The least a client can load: HTTP/1.0 over a plain socket, one connection per call, the body read to the end
   * (HTTP/1.0 asks the server for neither chunking nor keep-alive).
   */
  private static String postOverSocket(String endpoint, String path, String body) throws IOException {
    URI uri = URI.create(endpoint);
    byte[] content = body.getBytes(StandardCharsets.UTF_8);
    try (java.net.Socket socket = new java.net.Socket(uri.getHost(), uri.getPort())) {
      socket.setSoTimeout(30_000);
      java.io.OutputStream out = socket.getOutputStream();
      out.write(("POST " + path + " HTTP/1.0\r\nHost: " + uri.getHost() + ":" + uri.getPort()
          + "\r\nContent-Type: application/json\r\nContent-Length: " + content.length + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.write(content);
      out.flush();
      String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!answer.startsWith("HTTP/1.0 200") && !answer.startsWith("HTTP/1.1 200")) {
        throw new IllegalStateException(path + ": " + answer);
      }
      return answer.substring(answer.indexOf("\r\n\r\n") + 4);
    }
  }

  private static long cpuMillis() throws IOException {
    // /proc/self/stat fields 14 and 15 (utime, stime) in clock ticks (USER_HZ = 100 on Linux); the command name in
    // field 2 is in parentheses and may hold spaces, so count from its closing parenthesis.
    String stat = Files.readString(Path.of("/proc/self/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10;
  }

  private static long rssKb() throws IOException {
    for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (l.startsWith("VmRSS:")) {
        return Long.parseLong(l.replaceAll("\\D", ""));
      }
    }
    return -1;
  }

  /** The class+load log's lines so far (-Xlog writes one line per class, unbuffered enough for a count). */
  private static long loadedClasses() throws IOException {
    try (var lines = Files.lines(Path.of(System.getProperty("bench.class-log")))) {
      return lines.count();
    }
  }

  /** Variant {@code v} minus none, paired per round: median (min…max). */
  private static String added(double[][][] r, int v, int m) {
    double[] d = RoundStats.differences(r, v, m);
    double[] s = d.clone();
    Arrays.sort(s);
    return String.format(Locale.ROOT, "%+.0f (%+.0f…%+.0f)", RoundStats.median(d), s[0], s[s.length - 1]);
  }
}
