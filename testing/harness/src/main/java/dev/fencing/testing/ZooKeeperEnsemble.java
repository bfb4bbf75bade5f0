package dev.fencing.testing;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A real ZooKeeper ensemble: {@code size} servers ({@code QuorumPeerMain} of {@code org.apache.zookeeper:zookeeper}),
 * each in a child JVM on free loopback ports with its own temporary data dir. Ready (a leader elected, every running
 * server serving) on return from {@link #start(int)}.
 *
 * <p>The servers' class path (zookeeper, jute, netty, SLF4J with the log4j binding) is resolved when the harness is
 * built and stored in the harness jar, like the Kafka broker's; {@code -Dfencing.zookeeper.server.classpath}
 * overrides it. The harness talks to the servers with the four-letter words {@code srvr} and {@code ruok} only, so
 * tests need no ZooKeeper client unless they use one themselves.
 *
 * <p>Settings: tickTime 200 ms (sessions of 0.4 s to 60 s), initLimit 25 and syncLimit 10 ticks (2 s: a busy
 * two-core machine; {@link #startWithQuorumProxies} sets another), no admin server. A server can be stopped, killed,
 * frozen and restarted, cut from the quorum (with quorum proxies), the whole ensemble wiped (data deleted, a new
 * ensemble with a new history). Servers are stopped by {@link #close()} and, if a test run
 * is aborted, by a shutdown hook of the test JVM.
 */
public final class ZooKeeperEnsemble implements AutoCloseable {
  /** System property naming the server class path (overrides the one resolved at build time). */
  public static final String CLASSPATH_PROPERTY = "fencing.zookeeper.server.classpath";
  private static final String CLASSPATH_RESOURCE = "zookeeper-server.classpath";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  public static final int TICK_MILLIS = 200;

  /** One server of the ensemble. */
  public final class Server {
    final int id;
    final int clientPort;
    final int quorumPort;
    final int electionPort;
    /** The TLS client port (0: none); the plain one stays for the harness's four-letter words. */
    final int secureClientPort;
    final Path dir;
    Process process;

    Server(int id, int[] ports) {
      this.id = id;
      this.clientPort = ports[0];
      this.quorumPort = ports[1];
      this.electionPort = ports[2];
      this.secureClientPort = ports.length > 3 ? ports[3] : 0;
      this.dir = root.resolve("server" + id);
    }

    public int id() {
      return id;
    }

    public int clientPort() {
      return clientPort;
    }

    public String address() {
      return "127.0.0.1:" + clientPort;
    }

    /** The TLS client address ({@link ClientTls}); fails on an ensemble started without it. */
    public String secureAddress() {
      if (secureClientPort == 0) {
        throw new IllegalStateException("this ensemble was started without client TLS");
      }
      return "127.0.0.1:" + secureClientPort;
    }

    public boolean isAlive() {
      return process != null && process.isAlive();
    }

    /** The server's role from {@code srvr} ("leader", "follower", "standalone"), or null if it does not serve. */
    public String mode() {
      String srvr = fourLetterWord(clientPort, "srvr");
      if (srvr == null) {
        return null;
      }
      for (String line : srvr.split("\n")) {
        if (line.startsWith("Mode: ")) {
          return line.substring(6).trim();
        }
      }
      return null;
    }

    public void start() {
      launch(this);
    }

    /** SIGTERM, SIGKILL after 10 s. */
    public void stop() {
      stopProcess(process, false);
    }

    /** SIGKILL: the server dies at once, as a crashed machine. */
    public void kill() {
      stopProcess(process, true);
    }

    /** SIGSTOP: connections stay open, nothing is answered. */
    public void suspend() {
      Processes.signal(process.pid(), "STOP");
    }

    public void resume() {
      Processes.signal(process.pid(), "CONT");
    }

    public Path logFile() {
      return dir.resolve("server.log");
    }

    @Override
    public String toString() {
      return "ZooKeeper server " + id + " " + address() + (isAlive() ? " (pid " + process.pid() + ")" : " (not running)");
    }
  }

  /**
   * Client TLS: each server also serves clients on a secure port (Netty), with {@code files}' server certificate and
   * key (PEM) and trusting {@code files}' CA; {@code needClientAuth}: a client must present a certificate that CA
   * signed. Quorum traffic stays plain.
   */
  public record ClientTls(TlsFiles files, boolean needClientAuth) {
  }

  private final Path root;
  private final String classpath;
  private final ClientTls tls;
  private final List<Server> servers = new ArrayList<>();
  /** syncLimit in ticks: how long a follower serves its clients without hearing from the leader. */
  private int syncLimitTicks = 10;
  /**
   * With {@link #startWithQuorumProxies}: per (server, other server), the proxies through which the first reaches
   * the second's quorum and election ports ({@code "<from>><to>:q"}, {@code "<from>><to>:e"}).
   */
  private final Map<String, TcpProxy> quorumProxies = new java.util.HashMap<>();

  private ZooKeeperEnsemble(Path root, String classpath, ClientTls tls) {
    this.root = root;
    this.classpath = classpath;
    this.tls = tls;
  }

  /**
   * An ensemble whose servers reach each other's quorum and election ports only through proxies of the test's, so that
   * one server can be cut from the quorum ({@link #cutFromQuorum}) while it keeps serving its clients: a follower
   * that hears nothing from the leader goes on answering its clients' pings for {@code syncLimitTicks} ticks before
   * it drops them. Its clients' sessions expire on the leader meanwhile.
   */
  public static ZooKeeperEnsemble startWithQuorumProxies(int size, int syncLimitTicks) {
    return start(size, null, syncLimitTicks, true);
  }

  /**
   * Blackholes every quorum and election connection to and from {@code server} (connections stay open, bytes stop
   * both ways), until {@link #healQuorum}. Only with {@link #startWithQuorumProxies}.
   */
  public void cutFromQuorum(Server server) {
    if (quorumProxies.isEmpty()) {
      throw new IllegalStateException("the ensemble was not started with quorum proxies");
    }
    quorumProxies.forEach((key, proxy) -> {
      if (key.startsWith(server.id + ">") || key.contains(">" + server.id + ":")) {
        proxy.partition();
      }
    });
  }

  /** Lets every quorum and election connection flow again. */
  public void healQuorum() {
    quorumProxies.values().forEach(TcpProxy::heal);
  }

  /** Starts an ensemble of {@code size} servers (3 for a quorum that survives one failure); ready on return. */
  public static ZooKeeperEnsemble start(int size) {
    return start(size, null);
  }

  /** As {@link #start(int)}, with client TLS ({@code tls} null: none). */
  public static ZooKeeperEnsemble start(int size, ClientTls tls) {
    return start(size, tls, 10, false);
  }

  private static ZooKeeperEnsemble start(int size, ClientTls tls, int syncLimitTicks, boolean proxied) {
    String classpath = serverClasspath();
    Path root;
    try {
      root = Files.createTempDirectory("fencing-zookeeper-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble(root, classpath, tls);
    try {
      int each = tls == null ? 3 : 4;
      int[] ports = Ports.freePorts(each * size);
      for (int i = 0; i < size; i++) {
        ensemble.servers.add(ensemble.new Server(i + 1, java.util.Arrays.copyOfRange(ports, each * i, each * i + each)));
      }
      ensemble.syncLimitTicks = syncLimitTicks;
      if (proxied) {
        for (Server from : ensemble.servers) {
          for (Server to : ensemble.servers) {
            if (from != to) {
              ensemble.quorumProxies.put(from.id + ">" + to.id + ":q", new TcpProxy(to.quorumPort));
              ensemble.quorumProxies.put(from.id + ">" + to.id + ":e", new TcpProxy(to.electionPort));
            }
          }
        }
      }
      for (Server s : ensemble.servers) {
        ensemble.launch(s);
      }
      ensemble.awaitLeader(START_TIMEOUT);
      return ensemble;
    } catch (RuntimeException | Error e) {
      ensemble.close();
      throw e;
    }
  }

  /** {@code 127.0.0.1:p1,127.0.0.1:p2,...}: the client connect string (append a chroot path if needed). */
  public String connectString() {
    return servers.stream().map(Server::address).collect(Collectors.joining(","));
  }

  /** The connect string of the TLS client ports ({@link ClientTls}). */
  public String secureConnectString() {
    return servers.stream().map(Server::secureAddress).collect(Collectors.joining(","));
  }

  public List<Server> servers() {
    return List.copyOf(servers);
  }

  public Server server(int index) {
    return servers.get(index);
  }

  /** The server that is the leader now, found with {@code srvr}. */
  public Server leader() {
    for (Server s : servers) {
      if (s.isAlive() && "leader".equals(s.mode())) {
        return s;
      }
    }
    throw new IllegalStateException("no ZooKeeper server is the leader: " + modes());
  }

  /** Each running server's mode, for failure messages. */
  public Map<Integer, String> modes() {
    Map<Integer, String> m = new TreeMap<>();
    for (Server s : servers) {
      m.put(s.id, s.isAlive() ? String.valueOf(s.mode()) : "not running");
    }
    return m;
  }

  /** Waits until one running server leads and every other running server follows (all serve clients). */
  public void awaitLeader(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      int leaders = 0;
      boolean allServe = true;
      for (Server s : servers) {
        if (!s.isAlive()) {
          continue;
        }
        String mode = s.mode();
        if ("leader".equals(mode) || "standalone".equals(mode)) {
          leaders++;
        } else if (!"follower".equals(mode)) {
          allServe = false;
        }
      }
      if (leaders == 1 && allServe) {
        return;
      }
      for (Server s : servers) {
        if (s.process != null && !s.process.isAlive() && s.process.exitValue() != 137 && s.process.exitValue() != 143) {
          throw new IllegalStateException(s + " exited with code " + s.process.exitValue() + "\n"
              + Processes.tail(s.logFile(), 60));
        }
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no ZooKeeper leader within " + timeout + ": " + modes() + "\n"
            + servers.stream().map(s -> s + ":\n" + Processes.tail(s.logFile(), 20)).collect(Collectors.joining("\n")));
      }
      Processes.sleep(100);
    }
  }

  /** Stops every server. */
  public void stop() {
    for (Server s : servers) {
      s.stop();
    }
  }

  /**
   * Stops every server, deletes their data (the tree and its transaction history: a new ensemble whose zxids start
   * over) and starts them again; ready on return.
   */
  public void wipeAndRestart() {
    stop();
    for (Server s : servers) {
      Processes.deleteTree(s.dir.resolve("data"));
    }
    for (Server s : servers) {
      launch(s);
    }
    awaitLeader(START_TIMEOUT);
  }

  private void launch(Server s) {
    if (s.isAlive()) {
      return;
    }
    Path data = s.dir.resolve("data");
    Path cfg = s.dir.resolve("zoo.cfg");
    Path log4j = s.dir.resolve("log4j2.properties");
    try {
      Files.createDirectories(data);
      Files.writeString(data.resolve("myid"), s.id + "\n");
      List<String> lines = new ArrayList<>(List.of(
          "tickTime=" + TICK_MILLIS,
          "initLimit=25",
          "syncLimit=" + syncLimitTicks,
          "minSessionTimeout=" + 2 * TICK_MILLIS,
          "maxSessionTimeout=60000",
          "dataDir=" + data,
          "clientPort=" + s.clientPort,
          "clientPortAddress=127.0.0.1",
          "admin.enableServer=false",
          "4lw.commands.whitelist=srvr,ruok,stat"));
      for (Server o : servers) {
        TcpProxy q = quorumProxies.get(s.id + ">" + o.id + ":q");
        TcpProxy e = quorumProxies.get(s.id + ">" + o.id + ":e");
        // Its own ports to listen on; the others' through its proxies to them, when there are proxies.
        lines.add("server." + o.id + "=127.0.0.1:" + (q == null ? o.quorumPort : q.port()) + ":"
            + (e == null ? o.electionPort : e.port()));
      }
      if (tls != null) {
        // ZooKeeper reads a PEM key store as the key and its certificate chain in one file.
        Path keyStore = s.dir.resolve("server-keystore.pem");
        Files.writeString(keyStore, Files.readString(tls.files().serverKey()) + "\n"
            + Files.readString(tls.files().serverCert()));
        lines.addAll(List.of(
            "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
            "secureClientPort=" + s.secureClientPort,
            "secureClientPortAddress=127.0.0.1",
            "ssl.keyStore.location=" + keyStore,
            "ssl.keyStore.type=PEM",
            "ssl.trustStore.location=" + tls.files().ca(),
            "ssl.trustStore.type=PEM",
            "ssl.clientAuth=" + (tls.needClientAuth() ? "need" : "none")));
      }
      Files.writeString(cfg, String.join("\n", lines) + "\n");
      Files.writeString(log4j, String.join("\n",
          "appender.out.type=Console",
          "appender.out.name=out",
          "appender.out.layout.type=PatternLayout",
          "appender.out.layout.pattern=[%d{HH:mm:ss,SSS}] %p %m (%c{1})%n",
          "rootLogger.level=info",
          "rootLogger.appenderRef.out.ref=out",
          ""));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> command = List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xms32m", "-Xmx256m",
        "-XX:TieredStopAtLevel=1", // starts faster; a test's load never needs C2, and the cores are shared
        "-Djava.awt.headless=true",
        "-Dlog4j2.configurationFile=" + log4j,
        "-Dzookeeper.jmx.log4j.disable=true",
        "-cp", classpath,
        "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg.toString());
    try {
      s.process = Processes.reapOnExit(new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(s.logFile().toFile()))
          .start());
      s.process.getOutputStream().close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the ZooKeeper server JVM; see " + s.logFile(), e);
    }
  }

  /** The answer to a four-letter word, or null when the server does not answer within 1 s. */
  static String fourLetterWord(int port, String word) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      socket.setSoTimeout(1000);
      OutputStream out = socket.getOutputStream();
      out.write(word.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      String answer = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      // "This ZooKeeper instance is not currently serving requests" while electing
      return answer.contains("not currently serving") ? null : answer;
    } catch (IOException e) {
      return null;
    }
  }

  private static void stopProcess(Process process, boolean kill) {
    if (process == null || !process.isAlive()) {
      return;
    }
    try {
      Processes.signal(process.pid(), "CONT"); // a suspended server would not act on SIGTERM
    } catch (IllegalStateException exitedMeanwhile) {
      // nothing left to resume
    }
    if (kill) {
      process.destroyForcibly();
    } else {
      process.destroy();
    }
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }

  /** Stops every server and deletes the data dirs. */
  @Override
  public void close() {
    try {
      for (Server s : servers) {
        stopProcess(s.process, true);
      }
      quorumProxies.values().forEach(TcpProxy::close);
    } finally {
      Processes.deleteTree(root);
    }
  }

  @Override
  public String toString() {
    return "ZooKeeper ensemble " + connectString() + " " + modes();
  }

  /** The server class path: the system property, else the one the harness build resolved; every entry must exist. */
  static String serverClasspath() {
    String cp = System.getProperty(CLASSPATH_PROPERTY);
    String origin = "-D" + CLASSPATH_PROPERTY;
    if (cp == null || cp.isBlank()) {
      origin = "the harness resource " + CLASSPATH_RESOURCE;
      try (InputStream in = ZooKeeperEnsemble.class.getResourceAsStream(CLASSPATH_RESOURCE)) {
        cp = in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    String rebuild = ": build the harness with Maven, which resolves org.apache.zookeeper:zookeeper from Maven "
        + "Central, or set -D" + CLASSPATH_PROPERTY + " to the server's class path";
    if (cp == null || cp.isEmpty()) {
      throw new IllegalStateException("the ZooKeeper server class path is missing (" + origin + ")" + rebuild);
    }
    for (String entry : cp.split(File.pathSeparator)) {
      if (!Files.isReadable(Path.of(entry))) {
        throw new IllegalStateException("the ZooKeeper server class path (" + origin + ") names " + entry
            + ", which does not exist" + rebuild);
      }
    }
    return cp;
  }
}
