package dev.fencing.agent.it.capture;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.kafka.KafkaProducerIT;

import static dev.fencing.agent.it.Checks.awaitCount;
import static dev.fencing.agent.it.Checks.awaitLock;
import static dev.fencing.agent.it.Checks.count;
import static dev.fencing.agent.it.Checks.strings;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.it.continuations.ContinuationsApp;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Work a declared section starts that finishes on another thread: a Kafka send callback (run by the producer's I/O
 * thread), a {@code CompletableFuture} stage of the JDK HttpClient's {@code sendAsync} (run by the client's executor)
 * and a thread the section starts with {@code new Thread} and joins each write to PostgreSQL, to a table fenced for
 * the section's lock and to an unfenced one. They run in the section's scope: the holder's writes carry its token (the fenced table takes them), and after the holder is
 * frozen past its TTL and a successor took over, the frozen holder's late callbacks (its buffered records fail, its
 * request completes) write nothing to the unfenced table after the successor's first write.
 */
class ScopeContinuationsIT {
  private static final String SECTION = ContinuationsApp.class.getName() + "#tick@cont";

  /** The agent's own logic (which scope a continuation runs in), the same on every Java. */
  static List<Path> newestJava() {
    return AgentProcesses.newestJava();
  }

  @ParameterizedTest
  @MethodSource("newestJava")
  void callbacksAndStagesRunInTheScopeOfTheSectionThatStartedThem(Path javaHome) throws Exception {
    HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", Ports.freePort()), 0);
    receiver.createContext("/", exchange -> {
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    receiver.start();
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start();
        KafkaBroker broker = KafkaBroker.start()) {
      broker.createTopic("ticks", 1);
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        String token = "token bigint DEFAULT nullif(current_setting('fencing.token', true), '')::bigint";
        s.execute("CREATE TABLE cont_fenced (id bigserial PRIMARY KEY, writer text, kind text, " + token + ")");
        s.execute("CREATE TABLE cont_log (id bigserial PRIMARY KEY, writer text, kind text, outcome text, " + token
            + ")");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("cont_fenced"), "cont", false, false));
      }
      String agentArgs = "sections=" + SECTION + ",lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints="
          + etcd.endpoints();
      String httpUrl = "http://127.0.0.1:" + receiver.getAddress().getPort() + "/";
      int portA = Ports.freePort();
      try (AgentJvm a = app(javaHome, "a", agentArgs, portA, broker, url, httpUrl);
          Connection c = DriverManager.getConnection(url)) {
        long tokenA = awaitLock(portA, "cont", "HOLDING", Duration.ofSeconds(15));
        for (String kind : new String[] {"kafka", "http", "combined", "thread"}) {
          awaitCount(c, "SELECT count(*) FROM cont_fenced WHERE kind = '" + kind + "'", 3,
              Duration.ofSeconds(20));
        }
        assertThat(strings(c, "SELECT DISTINCT kind || ':' || coalesce(token::text, 'untagged') FROM cont_fenced"))
            .as("the callbacks' and stages' writes carry the section's token")
            .containsExactlyInAnyOrder("kafka:" + tokenA, "http:" + tokenA, "combined:" + tokenA, "thread:" + tokenA);
        assertThat(a.output()).doesNotContain("WRITE-ERR");

        int portB = Ports.freePort();
        try (AgentJvm b = app(javaHome, "b", agentArgs, portB, broker, url, httpUrl)) {
          awaitLock(portB, "cont", "STANDBY", Duration.ofSeconds(15));
          a.suspend(); // records in the producer's buffer (linger 1 s), perhaps a request in flight
          long tokenB = awaitLock(portB, "cont", "HOLDING", Duration.ofSeconds(3 + 5));
          assertThat(tokenB).isGreaterThan(tokenA);
          awaitCount(c, "SELECT count(*) FROM cont_log WHERE writer = 'b'", 2, Duration.ofSeconds(15));
          long firstB = count(c, "SELECT min(id) FROM cont_log WHERE writer = 'b'");
          a.resume();
          Thread.sleep(4000); // the buffered records' fate and the late stages, well past the producer's linger
          assertThat(count(c, "SELECT count(*) FROM cont_log WHERE writer = 'a' AND id > " + firstB))
              .as("the frozen holder's late callbacks that wrote to the unfenced table after the successor's first")
              .isZero();
          assertThat(a.output()).contains("WRITE-ERR kafka cont_log FN003");
        }
      }
    } finally {
      receiver.stop(0);
    }
  }

  private static AgentJvm app(Path javaHome, String name, String agentArgs, int port, KafkaBroker broker, String url,
      String httpUrl) {
    String classpath = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar")
        + File.pathSeparator + KafkaProducerIT.clientsJar(System.getProperty("fencing.it.kafka.clients.latest"))
        + File.pathSeparator + System.getProperty("fencing.it.slf4j.jar");
    AgentJvm jvm = AgentJvm.builder().javaHome(javaHome).name("continuations-" + name)
        .agentArgs(agentArgs + ",http.port=" + port + ",holder.id=" + name).classpath(classpath)
        .mainClass(ContinuationsApp.class.getName()).args(name, broker.bootstrapServers(), "ticks", url, httpUrl)
        .start();
    jvm.awaitOutput("APP STARTED", Duration.ofSeconds(30));
    return jvm;
  }
}
