package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.jdbc.JdbcTakeoverIT;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.apps.DownstreamServiceApp;
import dev.fencing.agent.it.apps.HttpApp;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.Ports;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Worker → downstream service → PostgreSQL. The service runs the agent without a lease of its own and without an HTTP
 * fence: the token each request brings becomes the token of the service's database writes (on the request thread, in
 * a thread pool, in CompletableFuture's pool), so the database fence rejects a stale worker's request.
 */
class CrossHopIT {
  private static final Pattern PORTS = Pattern.compile("APP STARTED jdk=(\\d+) servlet=(\\d+)");

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void aStaleWorkersRequestIsRejectedByTheDatabaseBehindAServiceWithoutAnHttpFence(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE ledger (id SERIAL PRIMARY KEY, amount INT NOT NULL)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("ledger"), "xhop", false, false));
      }
      int servicePort = Ports.freePort();
      try (AgentJvm service = AgentJvm.builder().javaHome(javaHome)
          .name("downstream-java" + AgentProcesses.javaVersion(javaHome))
          .agentArgs("lease.enabled=false,http.port=" + servicePort)
          .classpath(AgentProcesses.appClasspath() + File.pathSeparator + AgentProcesses.libraries("jetty-",
              "jakarta.servlet-api", "slf4j-api", "HikariCP", "postgresql", "fencing-fence-http",
                  "fencing-fence-store", "fencing-protocol", "fencing-fence-sql"))
          .mainClass(DownstreamServiceApp.class.getName()).args(url).start()) {
        Matcher m = PORTS.matcher(service.awaitOutput("APP STARTED", Duration.ofSeconds(30)));
        assertThat(m.find()).as(service.output()).isTrue();
        String jdk = "http://127.0.0.1:" + m.group(1);
        String servlet = "http://127.0.0.1:" + m.group(2);
        assertThat(Http.get("http://127.0.0.1:" + servicePort + "/status")).contains("\"state\":\"NO_LEASE\"");

        int portA = Ports.freePort();
        try (AgentJvm a = worker(javaHome, "a", portA, etcd, m)) {
          AppStdin stdinA = AppStdin.http(a);
          String statusA = Http.awaitStatus(portA, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
          long tokenA = token(statusA);
          String grantA = Http.jsonField(statusA, "leaseId").replace("\"", "");

          // The service's own HTTP call made for A's request carries A's token and grant (Fencing-Grant) onward.
          assertThat(stdinA.run("SEND POST " + jdk + "/relay")).startsWith("STATUS 200");
          assertThat(stdinA.run("SEND POST " + servlet + "/relay")).startsWith("STATUS 200");
          assertThat(service.output()).contains("RELAYED jdk token=[" + tokenA + "] grant=[" + grantA + "]",
              "RELAYED servlet token=[" + tokenA + "] grant=[" + grantA + "]");

          // Work handed to priority pools (natural order, comparator on the task type) still runs: the agent
          // does not replace a task whose type the queue relies on.
          assertThat(stdinA.run("SEND POST " + jdk + "/priority")).startsWith("STATUS 200");
          assertThat(service.output()).contains("PRIORITY OKOK OKOK");

          // The holder's requests: each write carries its token, whichever thread of the service makes it.
          assertThat(stdinA.run("SEND POST " + jdk + "/direct?amount=1")).startsWith("STATUS 200");
          assertThat(fenceToken(url)).isEqualTo(tokenA);
          assertThat(stdinA.run("SEND POST " + servlet + "/executor?amount=2")).startsWith("STATUS 200");
          assertThat(stdinA.run("SEND POST " + jdk + "/async?amount=3")).startsWith("STATUS 200");
          assertThat(stdinA.run("SEND POST " + jdk + "/fenced/direct?amount=4")).startsWith("STATUS 200");

          // A request without a token (not from a worker): the pooled session must not lend it A's token.
          assertThat(post(jdk + "/direct?amount=100")).isEqualTo(500);
          assertThat(service.output()).contains("WRITE jdk/direct SQLSTATE FN002");

          int portB = Ports.freePort();
          try (AgentJvm b = worker(javaHome, "b", portB, etcd, m)) {
            AppStdin stdinB = AppStdin.http(b);
            Http.awaitStatus(portB, "\"state\":\"STANDBY\"", Duration.ofSeconds(15));
            a.suspend(); // a long GC pause
            long tokenB = token(Http.awaitStatus(portB, "\"state\":\"HOLDING\"", Duration.ofSeconds(6)));
            assertThat(tokenB).isGreaterThan(tokenA);
            assertThat(stdinB.run("SEND POST " + servlet + "/async?amount=10")).startsWith("STATUS 200");
            assertThat(fenceToken(url)).isEqualTo(tokenB);
            assertThat(stdinB.run("SEND POST " + jdk + "/fenced/direct?amount=5")).startsWith("STATUS 200");

            // A wakes up: its requests reach the service (a fenced destination), but the database rejects every
            // write made on their behalf, on every path.
            a.resume();
            for (String path : List.of(jdk + "/direct", servlet + "/direct", jdk + "/executor", servlet + "/async")) {
              assertThat(stdinA.run("SEND POST " + path + "?amount=666")).as(path).startsWith("STATUS 500");
            }
            assertThat(service.output()).contains("WRITE jdk/direct SQLSTATE FN001", "WRITE servlet/direct SQLSTATE FN001",
                "WRITE jdk/executor SQLSTATE FN001", "WRITE servlet/async SQLSTATE FN001");
            // With the HTTP fence in front, the stale request stops at the fence: 409, counted on both sides.
            assertThat(stdinA.run("SEND POST " + jdk + "/fenced/direct?amount=666")).startsWith("STATUS 409");
            assertThat(Http.get("http://127.0.0.1:" + portA + "/metrics"))
                .contains("fencing_rejections_total{channel=\"http\",lock=\"xhop\",reason=\"stale_token\"} 1.0");
            assertThat(Http.get(jdk + "/fence-metrics"))
                .contains("fencing_fence_rejections_total{fence=\"http\",lock=\"xhop\",reason=\"stale_token\"} 1");
            assertThat(stdinB.run("SEND POST " + jdk + "/executor?amount=20")).startsWith("STATUS 200");
          }
        }
        assertThat(query(url, "SELECT count(*) || ' ' || sum(amount) FROM ledger")).isEqualTo("7 45");
        String metrics = Http.get("http://127.0.0.1:" + servicePort + "/metrics");
        assertThat(metrics)
            .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"true\",lock=\"none\",outcome=\"tagged\"} 11.0")
            .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"true\",lock=\"none\",outcome=\"passed\"} 1.0")
            .contains("fencing_rejections_total{channel=\"jdbc\",lock=\"none\",reason=\"stale_token\"} 4.0");
      }
    }
  }

  /** A worker (JDK HttpClient app) with lock xhop; both service ports are fenced destinations. */
  private static AgentJvm worker(Path javaHome, String name, int port, EtcdCluster etcd, Matcher ports) {
    AgentJvm jvm = AgentJvm.builder().javaHome(javaHome).name("worker-" + name + "-java" + AgentProcesses.javaVersion(javaHome))
        .agentArgs("lock=xhop,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port + ",etcd.endpoints=" + etcd.endpoints())
        .sysProp("fencing.fenced.http", "127.0.0.1:" + ports.group(1) + ",127.0.0.1:" + ports.group(2))
        .classpath(AgentProcesses.appClasspath()).mainClass(HttpApp.class.getName()).start();
    jvm.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    return jvm;
  }

  private static long token(String status) {
    return Long.parseLong(Http.jsonField(status, "token"));
  }

  private static long fenceToken(String url) throws Exception {
    return Long.parseLong(query(url, "SELECT token FROM fencing_fence WHERE lock_name = 'xhop'"));
  }

  private static String query(String url, String sql) throws Exception {
    return JdbcTakeoverIT.query(url, sql);
  }

  /** A POST from the test JVM, which has no agent: no token. */
  private static int post(String url) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).POST(HttpRequest.BodyPublishers.ofString("x")).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }
}
