package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.jdbc.JdbcIT;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.apps.HttpApp;
import dev.fencing.fence.http.FenceHttpFilter;
import dev.fencing.fence.http.HttpFence;
import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.InMemoryFenceStore;
import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenSignature;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Signed tokens end to end: the agent with {@code fencing.signing.key-file} sends {@code Fencing-Signature} beside
 * the token, and a real JDK HttpServer behind the HTTP fence holding the same key admits it; a forged huge token
 * (token poisoning) is refused before the fence moves. A bad key file is a startup error and fails closed.
 */
class SignedTokensIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @TempDir
  Path dir;

  @ParameterizedTest
  @MethodSource("javaHomes")
  void theAgentSignsEachTokenAndTheFenceWithTheKeyAdmitsOnlySignedOnes(Path javaHome) throws Exception {
    byte[] raw = new byte[32];
    new java.security.SecureRandom().nextBytes(raw);
    Path keyFile = Files.writeString(dir.resolve("fencing.key"), Base64.getEncoder().encodeToString(raw) + "\n");
    TokenSignature key = TokenSignature.load(keyFile);
    HttpFence fence = new HttpFence(FencePolicy.forLocks("signed").signingKey(key).build(), new InMemoryFenceStore());
    List<String> received = new CopyOnWriteArrayList<>();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newFixedThreadPool(4));
    server.createContext("/", ex -> {
      received.add(ex.getRequestHeaders().getFirst("Fencing-Token") + " "
          + ex.getRequestHeaders().getFirst("Fencing-Signature"));
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, -1);
      ex.close();
    }).getFilters().add(new FenceHttpFilter(fence));
    server.start();
    String base = "http://127.0.0.1:" + server.getAddress().getPort();
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = start(javaHome, "signed", port, "signing.key-file=" + keyFile, base, etcd)) {
      AppStdin stdin = AppStdin.http(app);
      long token = Long.parseLong(Http.jsonField(
          Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token"));

      assertThat(stdin.run("SEND POST " + base + "/orders")).startsWith("STATUS 200");
      assertThat(stdin.run("SEND PUT " + base + "/orders/1")).startsWith("STATUS 200");
      assertThat(received).hasSize(2);
      String signature = received.get(0).split(" ")[1];
      assertThat(received).containsOnly(token + " " + signature);
      assertThat(key.verify("signed", token, signature)).as("the signature the server received verifies").isTrue();
      assertThat(signature).isEqualTo(key.sign("signed", token));
      assertThat(fence.store().current("signed")).isEqualTo(token);

      // Poisoning attempt from outside the agent: a huge token with a signature of another token.
      java.net.http.HttpResponse<String> forged = java.net.http.HttpClient.newHttpClient().send(
          java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/orders"))
              .POST(java.net.http.HttpRequest.BodyPublishers.noBody())
              .header("Fencing-Token", Long.toString(Long.MAX_VALUE)).header("Fencing-Lock", "signed")
              .header("Fencing-Signature", signature).build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      assertThat(forged.statusCode()).isEqualTo(403);
      assertThat(forged.headers().firstValue("Fencing-Rejected")).hasValue("bad-signature");
      assertThat(fence.store().current("signed")).isEqualTo(token);
      assertThat(fence.metrics().count("signed", Rejection.BAD_SIGNATURE)).isEqualTo(1);

      // The legitimate holder is not locked out.
      assertThat(stdin.run("SEND POST " + base + "/orders")).startsWith("STATUS 200");
      assertThat(received).hasSize(3);
    } finally {
      server.stop(0);
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void jdbcSessionsCarryTheSignatureBesideTheToken(Path javaHome) throws Exception {
    byte[] raw = new byte[48];
    new java.security.SecureRandom().nextBytes(raw);
    Path keyFile = Files.writeString(dir.resolve("jdbc.key"), Base64.getUrlEncoder().encodeToString(raw));
    TokenSignature key = TokenSignature.load(keyFile);
    try (EtcdCluster etcd = EtcdCluster.single();
        JdbcIT.JdbcJvm app = new JdbcIT.JdbcJvm(javaHome, "signed-jdbc", "lock=signed,signing.key-file=" + keyFile
            + ",etcd.endpoints=" + etcd.endpoints(), "jdbc:h2:mem:signed;DB_CLOSE_DELAY=-1",
            JdbcIT.classpath("fencing.it.h2.jar"))) {
      long token = Long.parseLong(Http.jsonField(
          Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token"));
      assertThat(app.run("SQL CREATE TABLE account (id INT PRIMARY KEY, balance INT)")).startsWith("OK");
      assertThat(app.run("QUERY SELECT @fencing_token")).isEqualTo("ROW " + token);
      String row = app.run("QUERY SELECT @fencing_signature");
      assertThat(row).startsWith("ROW ");
      assertThat(key.verify("signed", token, row.substring(4))).as(row).isTrue();
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void aTooShortKeyFileIsAStartupErrorAndSideEffectsAreBlocked(Path javaHome) throws Exception {
    Path keyFile = Files.writeString(dir.resolve("short.key"), Base64.getEncoder().encodeToString(new byte[16]));
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = start(javaHome, "short-key", port, "signing.key-file=" + keyFile, "http://127.0.0.1:9", etcd)) {
      String error = app.awaitOutput("fencing.signing.key-file", Duration.ofSeconds(10));
      assertThat(error).contains("invalid configuration: fencing.signing.key-file='" + keyFile + "'")
          .contains("16 bytes, too short").contains("a base64 key of at least 32 bytes");
      assertThat(AppStdin.http(app).run("SEND POST http://127.0.0.1:9/orders"))
          .startsWith("ERR ").contains("Fencing Agent blocked a http side effect");
    }
  }

  private static AgentJvm start(Path javaHome, String name, int port, String extra, String fenced, EtcdCluster etcd) {
    AgentJvm app = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
        .agentArgs("lock=signed,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port + ",fenced.http="
            + java.net.URI.create(fenced).getAuthority() + ",etcd.endpoints=" + etcd.endpoints() + "," + extra)
        .classpath(AgentProcesses.appClasspath()).mainClass(HttpApp.class.getName()).start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    return app;
  }
}
