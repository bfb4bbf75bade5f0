package dev.fencing.agent.it.lease;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.testing.Http;
import dev.fencing.testing.TlsFiles;
import dev.fencing.testing.ZooKeeperEnsemble;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * fencing.coordinator=zookeeper over TLS, against a real ZooKeeper server whose secure client port requires a client
 * certificate: the agent holds the lock with the CA and its certificate as users have them (a {@code ca.crt} and a PEM
 * file of key and certificate), and without its certificate, or trusting another CA, it never holds and says why.
 * The test's own client reads the lock node over the server's plain port (kept for the harness).
 */
class ZooKeeperTlsIT {
  private static TlsFiles tls;
  private static ZooKeeperEnsemble zk;

  @BeforeAll
  static void startServer() {
    tls = TlsFiles.generate();
    zk = ZooKeeperEnsemble.start(1, new ZooKeeperEnsemble.ClientTls(tls, true));
  }

  @AfterAll
  static void stop() {
    if (zk != null) {
      zk.close();
    }
    if (tls != null) {
      tls.close();
    }
  }

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  static List<Path> newestJava() {
    return AgentProcesses.newestJava();
  }

  private static String args(String lock) {
    return "lock=" + lock + ",coordinator=zookeeper,zookeeper.connect=" + zk.secureConnectString()
        + ",lease.ttl=3s,lease.safety-margin=500ms";
  }

  /** The client's key and certificate in one PEM file, the form ZooKeeper's PEM key store reads. */
  private static Path clientPem(Path dir) throws Exception {
    return Files.writeString(dir.resolve("client.pem"), Files.readString(tls.clientKey()) + "\n"
        + Files.readString(tls.clientCert()));
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void theAgentHoldsTheLockOverTlsWithItsClientCertificate(Path javaHome, @TempDir Path dir) throws Exception {
    String lock = "tls-java" + AgentProcesses.javaVersion(javaHome);
    try (Agent holder = AgentProcesses.start(javaHome, "zk-tls", args(lock) + ",zookeeper.tls.truststore=" + tls.ca()
        + ",zookeeper.tls.keystore=" + clientPem(dir))) {
      String status = holder.awaitState("HOLDING", Duration.ofSeconds(30));
      long token = holder.token();
      assertThat(token).as(status).isPositive();
      // The token is the czxid of the agent's lock node, as the server itself reports it.
      CountDownLatch connected = new CountDownLatch(1);
      try (ZooKeeper z = new ZooKeeper(zk.connectString(), 10_000, e -> {
        if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
          connected.countDown();
        }
      })) {
        assertThat(connected.await(20, TimeUnit.SECONDS)).isTrue();
        String path = "/fencing/locks/" + lock;
        List<String> nodes = z.getChildren(path, false);
        assertThat(nodes).hasSize(1);
        Stat stat = z.exists(path + "/" + nodes.get(0), false);
        assertThat(stat.getCzxid()).isEqualTo(token);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("newestJava")
  void withoutItsCertificateOrTrustingAnotherCaTheAgentNeverHoldsAndSaysWhy(Path javaHome, @TempDir Path dir)
      throws Exception {
    String lock = "tls-refused-java" + AgentProcesses.javaVersion(javaHome);
    try (TlsFiles other = TlsFiles.generate();
        Agent noCertificate = AgentProcesses.start(javaHome, "zk-tls-nocert", args(lock)
            + ",zookeeper.tls.truststore=" + tls.ca());
        Agent otherCa = AgentProcesses.start(javaHome, "zk-tls-otherca", args(lock) + ",zookeeper.tls.truststore="
            + other.ca() + ",zookeeper.tls.keystore=" + clientPem(dir))) {
      String noCertificateDetail = Http.jsonField(noCertificate.awaitState("FAILED", Duration.ofSeconds(30)), "detail");
      assertThat(noCertificateDetail).contains("established a session within").contains("over TLS")
          .contains("fencing.zookeeper.tls.keystore is set (it is not)");
      String otherCaDetail = Http.jsonField(otherCa.awaitState("FAILED", Duration.ofSeconds(30)), "detail");
      assertThat(otherCaDetail).contains("over TLS").contains("fencing.zookeeper.tls.truststore (" + other.ca() + ")");
      // The handshake's own error is in the agent's log, where the detail sends the operator.
      assertThat(otherCa.jvm.output()).contains("unable to find valid certification path");
      assertThat(noCertificate.state()).isEqualTo("FAILED");
      assertThat(otherCa.state()).isEqualTo("FAILED");
    }
  }
}
