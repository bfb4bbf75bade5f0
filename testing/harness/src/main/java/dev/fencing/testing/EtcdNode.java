package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One real etcd server process on loopback ports. Tests stop, kill and restart single members to see how the agent
 * copes with member loss and quorum loss, so a node keeps its ports and data dir across restarts. Nodes are made by
 * {@link EtcdCluster}, which knows the initial-cluster spec they must share.
 */
public final class EtcdNode {

  private static final String INSTALL_HINT = " is not installed: run `apt-get update && apt-get install -y "
      + "etcd-server etcd-client` (Debian) — the integration tests need a real etcd";

  private final String name;
  private final int clientPort;
  private final int peerPort;
  private final Path dataDir;
  private final Path logFile;
  private final String initialCluster;
  private final TlsFiles tls;
  private String clusterToken;
  private Process process;
  private int starts;

  /** {@code tls} null: plain http; otherwise https client URLs that demand a client certificate (peers stay http). */
  EtcdNode(String name, int clientPort, int peerPort, Path root, String initialCluster, String clusterToken,
      TlsFiles tls) {
    this.name = name;
    this.clientPort = clientPort;
    this.peerPort = peerPort;
    this.dataDir = root.resolve(name);
    this.logFile = root.resolve(name + ".log");
    this.initialCluster = initialCluster;
    this.clusterToken = clusterToken;
    this.tls = tls;
  }

  /**
   * Spawns the server. The data dir is left for etcd to create (with the 0700 mode it insists on). On a restart
   * {@code --initial-cluster-state new} is ignored because the data dir already holds the member.
   */
  public void start() {
    if (isAlive()) {
      throw new IllegalStateException(this + " is already running");
    }
    List<String> command = new ArrayList<>(List.of(binary("etcd").toString(),
        "--name", name,
        "--data-dir", dataDir.toString(),
        "--listen-client-urls", clientUrl(),
        "--advertise-client-urls", clientUrl(),
        "--listen-peer-urls", peerUrl(),
        "--initial-advertise-peer-urls", peerUrl(),
        "--initial-cluster", initialCluster,
        "--initial-cluster-state", "new",
        "--initial-cluster-token", clusterToken,
        "--logger", "zap",
        "--log-outputs", "stderr"));
    if (!initialCluster.contains(",")) {
      // A one-node cluster elects itself after its election timeout (randomized between one and two, less the ticks
      // etcd fast-forwards): about 1 s of every start with the defaults (100 ms, 1 s), about 0.2 s with these. It has
      // no peer to miss heartbeats from, so a short timeout costs nothing; clusters of several nodes keep the
      // defaults, which tolerate a busy machine.
      command.addAll(List.of("--heartbeat-interval", "50", "--election-timeout", "250"));
    }
    if (tls != null) {
      command.addAll(List.of(
          "--cert-file", tls.serverCert().toString(),
          "--key-file", tls.serverKey().toString(),
          "--trusted-ca-file", tls.ca().toString(),
          "--client-cert-auth"));
    }
    try {
      // One log across restarts, with a marker, so a failure message shows what happened before the restart.
      Files.writeString(logFile, "=== harness: start #" + ++starts + " of " + name + " at " + Instant.now()
          + " ===\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      process = Processes.reapOnExit(new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
          .start());
      process.getOutputStream().close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start etcd " + name + "; see " + logFile, e);
    }
  }

  /** Clean shutdown (SIGTERM), forced after 10 s so a hung server cannot hang the test run. */
  public void stop() {
    signalStop();
    awaitStopped();
  }

  /** Abrupt death (SIGKILL), as in a crash or a lost machine: no goodbye to the peers. */
  public void kill() {
    if (process != null) {
      try {
        process.destroyForcibly().waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while killing " + this, e);
      }
    }
  }

  /** Stops the node if it runs and starts it again on the same ports and data. */
  public void restart() {
    stop();
    start();
  }

  /** Deletes the data dir, so that the next start makes a new member; the node must be stopped. */
  public void wipeData() {
    if (isAlive()) {
      throw new IllegalStateException("cannot wipe the data of " + this + " while it runs");
    }
    Processes.deleteTree(dataDir);
  }

  public long pid() {
    if (process == null) {
      throw new IllegalStateException("etcd " + name + " was never started");
    }
    return process.pid();
  }

  public boolean isAlive() {
    return process != null && process.isAlive();
  }

  public String name() {
    return name;
  }

  public int clientPort() {
    return clientPort;
  }

  public int peerPort() {
    return peerPort;
  }

  public String clientUrl() {
    return (tls == null ? "http" : "https") + "://127.0.0.1:" + clientPort;
  }

  public String peerUrl() {
    return "http://127.0.0.1:" + peerPort;
  }

  public Path dataDir() {
    return dataDir;
  }

  public Path logFile() {
    return logFile;
  }

  /** The end of this node's log, for failure messages. */
  public String logTail(int lines) {
    return Processes.tail(logFile, lines);
  }

  @Override
  public String toString() {
    return "etcd " + name + " " + clientUrl() + (isAlive() ? " (pid " + process.pid() + ")" : " (not running)");
  }

  void clusterToken(String token) {
    this.clusterToken = token;
  }

  void signalStop() {
    if (isAlive()) {
      process.destroy();
    }
  }

  void awaitStopped() {
    if (process == null) {
      return;
    }
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping " + this, e);
    }
  }

  /** Finds an etcd binary on PATH or in /usr/bin, failing with the install command rather than an IOException. */
  static Path binary(String name) {
    return Processes.executable(name, INSTALL_HINT);
  }
}
