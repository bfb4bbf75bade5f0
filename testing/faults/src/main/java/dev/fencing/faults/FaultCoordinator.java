package dev.fencing.faults;

import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.ZooKeeperEnsemble;
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
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The coordinator of a fault run and the faults that hit it: a 3-node etcd cluster or a 3-server ZooKeeper ensemble
 * ({@code --coordinator=zookeeper}). Each worker reaches its nodes only through its own TCP proxies (one per node),
 * so the same partition fault cuts a worker from either; the others have one meaning for both:
 * <ul>
 *   <li>leader kill: SIGKILL of the leader (etcd's, ZooKeeper's), restarted a moment later;</li>
 *   <li>restart: every node stopped, started again;</li>
 *   <li>wipe: data loss, a new cluster / ensemble on the same ports whose tokens start low again; then the runbook's
 *       remedy, moving the token source above every token issued: etcd's revision by puts, ZooKeeper's zxid by its
 *       epoch (every server restarted with {@code currentEpoch}/{@code acceptedEpoch} above the highest zxid's epoch:
 *       the next leader's zxids are {@code (epoch + 1) << 32} and up).</li>
 * </ul>
 */
interface FaultCoordinator extends AutoCloseable {

  static FaultCoordinator start(Topology.Coordinator kind) {
    return kind == Topology.Coordinator.ZOOKEEPER ? new ZooKeeper(ZooKeeperEnsemble.start(3))
        : new Etcd(EtcdCluster.of(3));
  }

  /** The client ports the workers' proxies forward to. */
  List<Integer> clientPorts();

  /** The agent arguments that point a worker at its proxies ({@code 127.0.0.1:<port>} each). */
  String agentArgs(List<Integer> proxyPorts);

  /** Kills the leader, restarts it after 0.5-2 s; what was done. */
  String killLeader(Random random);

  /** Stops every node, starts them after 0.2-1.5 s; what was done. */
  String restartAll(Random random);

  /** The newest token the coordinator could have issued (etcd's revision, ZooKeeper's last zxid). */
  long revision();

  /** Data loss: a brand-new cluster / ensemble on the same ports. */
  void wipeAndRestart();

  /** The runbook's remedy: moves the token source above {@code target}; returns where it is now. */
  long bumpAbove(long target);

  /**
   * Makes every holder campaign again (etcd: every lease revoked); ZooKeeper: nothing (an agent gives a reused
   * grant up and campaigns again by itself, and the bump restarted the ensemble).
   */
  void revokeAll();

  @Override
  void close();

  /** etcd: 3 nodes, the JSON gateway for the revision, its bump and the revokes. */
  final class Etcd implements FaultCoordinator {
    private final EtcdCluster etcd;

    Etcd(EtcdCluster etcd) {
      this.etcd = etcd;
    }

    @Override
    public List<Integer> clientPorts() {
      return etcd.nodes().stream().map(EtcdNode::clientPort).toList();
    }

    @Override
    public String agentArgs(List<Integer> proxyPorts) {
      return "etcd.endpoints=" + proxyPorts.stream().map(p -> "http://127.0.0.1:" + p)
          .collect(Collectors.joining(";"));
    }

    @Override
    public String killLeader(Random random) {
      EtcdNode leader = etcd.leader();
      leader.kill();
      long down = 500 + random.nextInt(1_500);
      FaultRun.sleep(down);
      leader.start();
      etcd.awaitHealthy(Duration.ofSeconds(30));
      return "killed etcd leader " + leader.name() + ", restarted after " + down + " ms";
    }

    @Override
    public String restartAll(Random random) {
      long t0 = System.nanoTime();
      etcd.stop();
      long stopped = System.nanoTime();
      long down = 200 + random.nextInt(1_300);
      FaultRun.sleep(down);
      long starting = System.nanoTime();
      etcd.start();
      long healthy = System.nanoTime();
      // The parts of the outage that are etcd's own (a clean stop, a start and an election), beside the chosen pause:
      // the time to a valid holder is read against them.
      return "stopped all etcd nodes (" + (stopped - t0) / 1_000_000 + " ms), started again after " + down
          + " ms (all healthy " + (healthy - starting) / 1_000_000 + " ms later)";
    }

    private String url() {
      return etcd.node(0).clientUrl();
    }

    @Override
    public long revision() {
      return EtcdGateway.revision(url());
    }

    @Override
    public void wipeAndRestart() {
      etcd.wipeAndRestart();
    }

    @Override
    public long bumpAbove(long target) {
      return EtcdGateway.bumpAbove(url(), target);
    }

    @Override
    public void revokeAll() {
      EtcdGateway.revokeAllLeases(url());
    }

    @Override
    public void close() {
      etcd.close();
    }
  }

  /** ZooKeeper: 3 servers (the harness's {@link ZooKeeperEnsemble}), read with the four-letter word {@code srvr}. */
  final class ZooKeeper implements FaultCoordinator {
    private static final Pattern ZXID = Pattern.compile("Zxid: 0x([0-9a-fA-F]+)");
    private static final Duration ELECTION = Duration.ofSeconds(60);
    private final ZooKeeperEnsemble zk;

    ZooKeeper(ZooKeeperEnsemble zk) {
      this.zk = zk;
    }

    @Override
    public List<Integer> clientPorts() {
      return zk.servers().stream().map(ZooKeeperEnsemble.Server::clientPort).toList();
    }

    @Override
    public String agentArgs(List<Integer> proxyPorts) {
      return "coordinator=zookeeper,zookeeper.connect=" + proxyPorts.stream().map(p -> "127.0.0.1:" + p)
          .collect(Collectors.joining(","));
    }

    @Override
    public String killLeader(Random random) {
      ZooKeeperEnsemble.Server leader = zk.leader();
      leader.kill();
      long down = 500 + random.nextInt(1_500);
      FaultRun.sleep(down);
      leader.start();
      zk.awaitLeader(ELECTION);
      return "killed ZooKeeper leader " + leader.id() + ", restarted after " + down + " ms";
    }

    @Override
    public String restartAll(Random random) {
      zk.stop();
      long down = 200 + random.nextInt(1_300);
      FaultRun.sleep(down);
      zk.servers().forEach(ZooKeeperEnsemble.Server::start);
      zk.awaitLeader(ELECTION);
      return "stopped all ZooKeeper servers, started again after " + down + " ms";
    }

    @Override
    public long revision() {
      long deadline = System.nanoTime() + ELECTION.toNanos();
      while (true) {
        long best = -1;
        for (ZooKeeperEnsemble.Server s : zk.servers()) {
          String srvr = s.isAlive() ? fourLetterWord(s.clientPort(), "srvr") : null;
          Matcher m = srvr == null ? null : ZXID.matcher(srvr);
          if (m != null && m.find()) {
            best = Math.max(best, Long.parseUnsignedLong(m.group(1), 16));
          }
        }
        if (best >= 0) {
          return best;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("no ZooKeeper server told its zxid within " + ELECTION + ": " + zk);
        }
        FaultRun.sleep(200);
      }
    }

    @Override
    public void wipeAndRestart() {
      zk.wipeAndRestart();
    }

    /**
     * Every server stopped and started again with {@code currentEpoch} and {@code acceptedEpoch} (the files in its
     * data dir's {@code version-2}) one above {@code target}'s epoch (a zxid's high 32 bits): the leader they elect
     * proposes a higher epoch still, and its zxids, the new tokens, are above {@code target}.
     */
    @Override
    public long bumpAbove(long target) {
      long epoch = (target >>> 32) + 1;
      zk.stop();
      for (ZooKeeperEnsemble.Server s : zk.servers()) {
        Path version2 = s.logFile().getParent().resolve("data").resolve("version-2");
        try {
          Files.createDirectories(version2);
          Files.writeString(version2.resolve("currentEpoch"), epoch + "\n");
          Files.writeString(version2.resolve("acceptedEpoch"), epoch + "\n");
        } catch (IOException e) {
          throw new UncheckedIOException("cannot set the epoch of " + s, e);
        }
      }
      zk.servers().forEach(ZooKeeperEnsemble.Server::start);
      zk.awaitLeader(ELECTION);
      long now = revision();
      if (now <= target) {
        throw new IllegalStateException("ZooKeeper's zxid 0x" + Long.toHexString(now) + " is not above 0x"
            + Long.toHexString(target) + " after setting epoch " + epoch);
      }
      return now;
    }

    @Override
    public void revokeAll() {
      // An agent gives a reused grant up and campaigns again by itself (LeaseKeeper's reuse backoff, 1-10 s).
    }

    @Override
    public void close() {
      zk.close();
    }

    private static String fourLetterWord(int port, String word) {
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
        socket.setSoTimeout(1000);
        OutputStream out = socket.getOutputStream();
        out.write(word.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = socket.getInputStream();
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        return null;
      }
    }
  }
}
