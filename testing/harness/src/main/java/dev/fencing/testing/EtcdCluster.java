package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A real etcd cluster of one or more nodes on free loopback ports, each cluster in its own temporary directory, so that
 * tests can run next to each other and next to a system etcd on 2379/2380. Tests talk to it through
 * {@link #endpoints()} and drive failures through {@link #node(int)} and {@link #leader()}. A cluster can demand TLS
 * with client certificates ({@link #singleTls(TlsFiles)}) and user authentication ({@link #enableAuth(String)}).
 */
public final class EtcdCluster implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(20);
  private static final Duration LEADER_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration ETCDCTL_TIMEOUT = Duration.ofSeconds(30);
  private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\":(\\d+)");
  private static final Pattern LEADER_ID = Pattern.compile("\"leader\":(\\d+)");
  private static final Pattern RAFT_TERM = Pattern.compile("\"raftTerm\":(\\d+)");
  private static final Pattern CLUSTER_ID = Pattern.compile("\"cluster_id\":(\\d+)");

  private final Path root;
  private final List<EtcdNode> nodes = new ArrayList<>();
  private final TlsFiles tls;
  private String rootPassword;

  private EtcdCluster(int size, TlsFiles tls) {
    this.tls = tls;
    try {
      root = Files.createTempDirectory("fencing-etcd-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int[] ports = Ports.freePorts(2 * size);
    StringBuilder spec = new StringBuilder();
    for (int i = 0; i < size; i++) {
      spec.append(i == 0 ? "" : ",").append("n").append(i + 1).append("=http://127.0.0.1:").append(ports[2 * i + 1]);
    }
    String token = newToken();
    for (int i = 0; i < size; i++) {
      nodes.add(new EtcdNode("n" + (i + 1), ports[2 * i], ports[2 * i + 1], root, spec.toString(), token,
          tls));
    }
  }

  /** A one-node cluster, healthy on return. */
  public static EtcdCluster single() {
    return of(1);
  }

  /**
   * A one-node cluster whose clients must speak TLS and present a certificate signed by {@code tls}'s CA (etcd's
   * {@code --client-cert-auth}), healthy on return. Its {@link #endpoints()} are https URLs; {@link #etcdctl} uses
   * {@code tls}'s client certificate. The caller keeps {@code tls} until the cluster is closed.
   */
  public static EtcdCluster singleTls(TlsFiles tls) {
    if (tls == null) {
      throw new IllegalArgumentException("a TLS cluster needs its certificates: tls is null");
    }
    return create(1, tls);
  }

  /** A cluster of {@code size} nodes named n1..n{@code size}, healthy on return. */
  public static EtcdCluster of(int size) {
    return create(size, null);
  }

  private static EtcdCluster create(int size, TlsFiles tls) {
    if (size < 1) {
      throw new IllegalArgumentException("an etcd cluster needs at least one node: " + size);
    }
    EtcdNode.binary("etcd");
    EtcdNode.binary("etcdctl");
    EtcdCluster cluster = new EtcdCluster(size, tls);
    try {
      cluster.start();
      return cluster;
    } catch (RuntimeException | Error e) {
      cluster.close();
      throw e;
    }
  }

  /** All client URLs, comma-separated, in the form both jetcd and etcdctl accept. */
  public String endpoints() {
    return nodes.stream().map(EtcdNode::clientUrl).collect(Collectors.joining(","));
  }

  public List<EtcdNode> nodes() {
    return List.copyOf(nodes);
  }

  /** The node at zero-based {@code index}: {@code node(0)} is n1. */
  public EtcdNode node(int index) {
    return nodes.get(index);
  }

  public Path root() {
    return root;
  }

  /**
   * The running node that considers itself leader. Polls for up to 10 s because right after a start or a leader's
   * death there is none; if two claim it (an old leader not yet aware of a newer term), the higher term wins.
   */
  public EtcdNode leader() {
    long deadline = System.nanoTime() + LEADER_TIMEOUT.toNanos();
    String statuses;
    do {
      EtcdNode leader = null;
      long leaderTerm = -1;
      StringBuilder seen = new StringBuilder();
      for (EtcdNode node : nodes) {
        if (!node.isAlive()) {
          continue;
        }
        Processes.Result status = etcdctlAt(node.clientUrl(), "endpoint", "status", "-w", "json");
        seen.append(node.name()).append(": ").append(status.ok() ? status.stdout() : status.stderr()).append('\n');
        String member = find(MEMBER_ID, status.stdout());
        String term = find(RAFT_TERM, status.stdout());
        if (status.ok() && member != null && member.equals(find(LEADER_ID, status.stdout())) && term != null
            && Long.parseLong(term) > leaderTerm) {
          leader = node;
          leaderTerm = Long.parseLong(term);
        }
      }
      if (leader != null) {
        return leader;
      }
      statuses = seen.toString();
      Processes.sleep(100);
    } while (System.nanoTime() < deadline);
    throw new IllegalStateException("no etcd leader after " + LEADER_TIMEOUT + "; endpoint status:\n" + statuses);
  }

  /**
   * The cluster id as etcd prints it in JSON (decimal); it changes on {@link #wipeAndRestart()}, which is how a test
   * tells the agent met a brand-new cluster.
   */
  public String clusterId() {
    String id = find(CLUSTER_ID, etcdctl("endpoint", "status", "-w", "json"));
    if (id == null) {
      throw new IllegalStateException("no cluster_id in etcdctl endpoint status output");
    }
    return id;
  }

  /**
   * Waits until every running node answers a health check (a quorum read). Stopped or killed nodes are left out, so
   * after losing a minority this shows the rest still serve; with no quorum it times out.
   */
  public void awaitHealthy(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      String live = nodes.stream().filter(EtcdNode::isAlive).map(EtcdNode::clientUrl)
          .collect(Collectors.joining(","));
      if (live.isEmpty()) {
        throw new IllegalStateException("no etcd node is running\n" + logTails());
      }
      Processes.Result health = etcdctlAt(live, "endpoint", "health");
      if (health.ok()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("etcd at " + live + " not healthy after " + timeout + ":\n"
            + health.stdout() + health.stderr() + "\n" + logTails());
      }
      Processes.sleep(100);
    }
  }

  /**
   * Starts every node that is not running, all before waiting, since a multi-node cluster elects no leader until a
   * quorum is up. Fails if a node died meanwhile (a port taken, a bad data dir), which a health check of the
   * others would hide.
   */
  public void start() {
    nodes.stream().filter(node -> !node.isAlive()).forEach(EtcdNode::start);
    awaitHealthy(START_TIMEOUT);
    for (EtcdNode node : nodes) {
      if (!node.isAlive()) {
        throw new IllegalStateException(node.name() + " exited during start\n" + node.logTail(40));
      }
    }
  }

  /** Stops every node cleanly; all are signalled first so the whole cluster takes as long as its slowest node. */
  public void stop() {
    nodes.forEach(EtcdNode::signalStop);
    nodes.forEach(EtcdNode::awaitStopped);
  }

  /**
   * Replaces the cluster with a brand-new one on the same ports: data wiped and a new cluster token, hence a new
   * cluster id and revisions starting again at 1, as after a disaster restore that a fenced client must notice.
   * Authentication, if {@link #enableAuth enabled}, goes with the data.
   */
  public void wipeAndRestart() {
    stop();
    String token = newToken();
    for (EtcdNode node : nodes) {
      node.wipeData();
      node.clusterToken(token);
    }
    rootPassword = null;
    start();
  }

  /**
   * Turns on etcd authentication: creates the user {@code root} (with the root role etcd requires) with
   * {@code rootPassword} and enables auth. From then on every client needs a user, and {@link #etcdctl} runs as
   * root. Further users and roles are made with {@link #etcdctl}, e.g. {@code etcdctl("user", "add", ...)}.
   */
  public void enableAuth(String rootPassword) {
    if (this.rootPassword != null) {
      throw new IllegalStateException("authentication is already enabled on " + this);
    }
    etcdctl("role", "add", "root");
    etcdctl("user", "add", "root", "--new-user-password=" + rootPassword, "--interactive=false");
    etcdctl("user", "grant-role", "root", "root");
    etcdctl("auth", "enable");
    this.rootPassword = rootPassword;
  }

  /**
   * Runs etcdctl (API v3) against all endpoints and returns its stdout; a non-zero exit throws with stderr. On a TLS
   * cluster it presents the client certificate; with authentication enabled it runs as root.
   */
  public String etcdctl(String... args) {
    Processes.Result result = etcdctlAt(endpoints(), args);
    if (!result.ok()) {
      throw new IllegalStateException("etcdctl " + String.join(" ", args) + " failed (exit " + result.exitCode()
          + "): " + result.stderr() + result.stdout());
    }
    return result.stdout();
  }

  /** Kills every node and deletes the cluster's directory, logs included. */
  @Override
  public void close() {
    nodes.forEach(EtcdNode::kill);
    Processes.deleteTree(root);
  }

  @Override
  public String toString() {
    return "etcd cluster " + nodes;
  }

  private Processes.Result etcdctlAt(String endpoints, String... args) {
    List<String> command = new ArrayList<>();
    command.add(EtcdNode.binary("etcdctl").toString());
    command.add("--endpoints=" + endpoints);
    if (tls != null) {
      command.add("--cacert=" + tls.ca());
      command.add("--cert=" + tls.clientCert());
      command.add("--key=" + tls.clientKey());
    }
    if (rootPassword != null) {
      command.add("--user=root:" + rootPassword);
    }
    command.addAll(List.of(args));
    return Processes.run(ETCDCTL_TIMEOUT, Map.of("ETCDCTL_API", "3"), command);
  }

  private String logTails() {
    return nodes.stream().map(node -> node.logTail(20)).collect(Collectors.joining("\n"));
  }

  private static String find(Pattern pattern, String text) {
    Matcher matcher = pattern.matcher(text);
    return matcher.find() ? matcher.group(1) : null;
  }

  private static String newToken() {
    return "fencing-" + UUID.randomUUID().toString().substring(0, 8);
  }
}
