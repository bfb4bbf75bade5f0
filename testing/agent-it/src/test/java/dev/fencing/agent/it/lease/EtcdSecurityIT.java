package dev.fencing.agent.it.lease;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.TlsFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent against a secured etcd: it logs in with a user and a password file, and speaks mutual TLS with a client
 * certificate. A wrong password or a server certificate it cannot trust leaves it FAILED with the etcd problem in its
 * status, while the application runs on (fail-mode closed: side effects blocked).
 */
class EtcdSecurityIT {
  private static final Duration CONNECT = Duration.ofSeconds(20);
  private static final Pattern CREATE_REVISION = Pattern.compile("\"create_revision\":(\\d+)");

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /**
   * etcd's user authentication is the client's and the agent's logic, the same on every Java: this build's (TLS, the
   * JDK's, runs on both).
   */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void userAndPasswordFileLogInAndAWrongPasswordFails(Path javaHome, @TempDir Path dir) throws Exception {
    Path password = Files.writeString(dir.resolve("etcd-password"), "fencing-secret-1\n");
    Path wrongPassword = Files.writeString(dir.resolve("wrong-password"), "not-the-secret\n");
    try (EtcdCluster etcd = EtcdCluster.single()) {
      etcd.enableAuth("root-secret-1");
      // A least-privileged user, as in production: read-write on the lock keys, nothing else.
      etcd.etcdctl("user", "add", "fencing", "--new-user-password=fencing-secret-1", "--interactive=false");
      etcd.etcdctl("role", "add", "fencing");
      etcd.etcdctl("role", "grant-permission", "fencing", "readwrite", "/fencing/locks/", "--prefix=true");
      etcd.etcdctl("user", "grant-role", "fencing", "fencing");

      String args = "lock=secured,etcd.timeout=2s,etcd.user=fencing,etcd.endpoints=" + etcd.endpoints()
          + ",etcd.password-file=";
      try (Agent holder = AgentProcesses.start(javaHome, "auth-holder", args + password)) {
        long token = Long.parseLong(Http.jsonField(awaitState(holder, "HOLDING"), "token"));
        assertThat(token).isPositive();
        assertLockHeldBy(etcd, "secured", "auth-holder", token);

        try (Agent wrong = AgentProcesses.start(javaHome, "auth-wrong", args + wrongPassword)) {
          String detail = Http.jsonField(awaitState(wrong, "FAILED"), "detail");
          System.out.println("wrong password, detail: " + detail);
          assertThat(detail).as("detail of %s", wrong.jvm)
              .contains("etcd unreachable or failing")
              .contains("authentication failed, invalid user ID or password");
          assertFailedClosedAndAppRuns(wrong);

          assertThat(holder.state()).isEqualTo("HOLDING");
          assertThat(holder.token()).isEqualTo(token);
          assertLockHeldBy(etcd, "secured", "auth-holder", token);
        }
      }
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void mutualTlsConnectsAndAServerCertificateFromAnotherCaFails(Path javaHome) throws Exception {
    try (TlsFiles tls = TlsFiles.generate();
        TlsFiles otherCa = TlsFiles.generate();
        EtcdCluster etcd = EtcdCluster.singleTls(tls)) {
      assertThat(etcd.endpoints()).startsWith("https://127.0.0.1:");
      String base = "lock=mutual,etcd.timeout=2s,etcd.endpoints=" + etcd.endpoints();
      String clientCert = ",etcd.tls.cert=" + tls.clientCert() + ",etcd.tls.key=" + tls.clientKey();

      String trustingItsCa = ",etcd.tls.ca=" + tls.ca();
      try (Agent holder = AgentProcesses.start(javaHome, "tls-holder", base + clientCert + trustingItsCa)) {
        long token = Long.parseLong(Http.jsonField(awaitState(holder, "HOLDING"), "token"));
        assertThat(token).isPositive();
        assertLockHeldBy(etcd, "mutual", "tls-holder", token);

        // The right client certificate, but trusting a CA that did not sign the server's certificate.
        try (Agent wrongCa = AgentProcesses.start(javaHome, "tls-wrong-ca",
                base + clientCert + ",etcd.tls.ca=" + otherCa.ca());
            // The right CA but no client certificate: etcd's --client-cert-auth must turn it away, which shows the
            // holder above got in by its certificate.
            Agent noCert = AgentProcesses.start(javaHome, "tls-no-cert", base + trustingItsCa)) {
          String wrongCaDetail = Http.jsonField(awaitState(wrongCa, "FAILED"), "detail");
          String noCertDetail = Http.jsonField(awaitState(noCert, "FAILED"), "detail");
          System.out.println("wrong CA, detail: " + wrongCaDetail);
          System.out.println("no client certificate, detail: " + noCertDetail);
          assertThat(wrongCaDetail).as("detail of %s", wrongCa.jvm)
              .contains("etcd unreachable or failing")
              .containsIgnoringCase("certification path");
          // etcd's TLS alert: bad_certificate (Go up to 1.20, as in Debian's etcd 3.4), certificate_required after.
          assertThat(noCertDetail).as("detail of %s", noCert.jvm)
              .contains("etcd unreachable or failing")
              .containsPattern("bad_certificate|certificate_required");
          assertFailedClosedAndAppRuns(wrongCa);
          assertFailedClosedAndAppRuns(noCert);

          assertThat(holder.state()).isEqualTo("HOLDING");
          assertThat(holder.token()).isEqualTo(token);
        }
      }
    }
  }

  /** Waits for a state; on timeout the failure carries the agent's log path and output, which say why. */
  private static String awaitState(Agent agent, String state) {
    try {
      return agent.awaitState(state, CONNECT);
    } catch (AssertionError e) {
      throw new AssertionError(agent.jvm + " did not reach " + state + ": " + e.getMessage()
          + "\n--- agent output ---\n" + agent.jvm.output(), e);
    }
  }

  /** The lock's only key (prefix + lock + "/" + lease id) holds the holder id and was created at the token. */
  private static void assertLockHeldBy(EtcdCluster etcd, String lock, String holderId, long token) {
    String prefix = "/fencing/locks/" + lock + "/";
    List<String> lines = etcd.etcdctl("get", "--prefix", prefix).lines().toList();
    assertThat(lines).as("etcdctl get --prefix %s", prefix).hasSize(2);
    assertThat(lines.get(0)).startsWith(prefix);
    assertThat(lines.get(1)).isEqualTo(holderId);
    Matcher revision = CREATE_REVISION.matcher(etcd.etcdctl("get", lines.get(0), "-w", "json"));
    assertThat(revision.find()).as("create_revision of %s", lines.get(0)).isTrue();
    assertThat(Long.parseLong(revision.group(1))).as("create revision of the lock key").isEqualTo(token);
  }

  private static void assertFailedClosedAndAppRuns(Agent agent) throws InterruptedException {
    Thread.sleep(100);
    assertThat(agent.jvm.isAlive()).as("%s still runs", agent.jvm).isTrue();
    assertThat(agent.lastDecision()).as("last decision of %s", agent.jvm).isEqualTo("BLOCK AGENT_FAILED 0");
    assertThat(agent.jvm.output()).containsPattern("WARN lock '\\w+': etcd error: .*; retrying");
  }
}
