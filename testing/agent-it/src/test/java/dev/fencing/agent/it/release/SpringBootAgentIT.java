package dev.fencing.agent.it.release;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.SpringApp;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An unmodified Spring Boot 3.5 service (sample-apps/spring-replicas: Spring Data JPA on PostgreSQL through
 * HikariCP, embedded Tomcat, Actuator, a {@code @Scheduled} job) started with {@code java -jar} and the agent holding
 * the JVM-wide lock ({@code fencing.lock}; the app's tables carry no fence, so the agent tags and never blocks
 * while it holds). Its Spring SQL init writes at startup, it serves GET and POST, and every write's session carries
 * the agent's token: the tables' {@code token_seen} column defaults to the session variable the agent sets.
 */
class SpringBootAgentIT {
  /**
   * The newest Java only: SpringSectionsIT starts the same app with the agent on 17 and 25 (Spring's startup, its SQL
   * init, JPA reads and writes through HikariCP, the scheduled job); what this case adds, those writes tagged under the
   * JVM-wide lock, is the agent's JDBC hook, the same on every Java. The newest: where a JDK change would show first.
   */
  static List<Path> newestJava() {
    return AgentProcesses.newestJava();
  }

  @ParameterizedTest
  @MethodSource("newestJava")
  void startsServesReadsAndWritesAndTagsItsJpaWritesWithTheToken(Path javaHome) throws Exception {
    int statusPort = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        PostgresServer pg = PostgresServer.start();
        SpringApp app = SpringApp.start(javaHome, "replica-a", pg.jdbcUrl(), pg.user(),
            "lock=orders,etcd.endpoints=" + etcd.endpoints() + ",http.port=" + statusPort, Duration.ofSeconds(120))) {
      String status = Http.awaitStatus(statusPort, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      String token = Http.jsonField(status, "token");
      assertThat(Long.parseLong(token)).as("token").isPositive();

      HttpResponse<String> created = app.postJson("/orders", "{\"item\":\"anvil\",\"quantity\":3}");
      assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
      assertThat(created.body()).contains("\"item\":\"anvil\"", "\"replica\":\"replica-a\"");
      HttpResponse<String> invalid = app.postJson("/orders", "{\"item\":\"\",\"quantity\":0}");
      assertThat(invalid.statusCode()).as("bean validation still runs").isEqualTo(400);
      HttpResponse<String> list = app.get("/orders");
      assertThat(list.statusCode()).isEqualTo(200);
      assertThat(list.body()).contains("\"item\":\"anvil\"");
      assertThat(app.get("/actuator/health").body()).contains("\"status\":\"UP\"");

      try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
        // Spring's SQL init wrote at startup (data.sql), the job keeps writing (every 500 ms).
        assertThat(column(c, "SELECT replica FROM replica_start")).containsExactly("replica-a");
        awaitRows(c, "SELECT count(*) FROM settlement_run", 3);
        assertThat(column(c, "SELECT DISTINCT coalesce(token_seen, 'untagged') FROM settlement_run"))
            .as("the scheduled job's writes (JdbcTemplate in @Transactional) carry the token")
            .containsExactly(token);
        assertThat(column(c, "SELECT coalesce(token_seen, 'untagged') FROM orders WHERE item = 'anvil'"))
            .as("the JPA insert (Hibernate through HikariCP) carries the token").containsExactly(token);
      }
      // Nothing was refused, and the agent counted tagged JDBC side effects.
      String metrics = Http.get("http://127.0.0.1:" + statusPort + "/metrics");
      assertThat(app.jvm().output()).doesNotContain("FencingBlockedException", "could not instrument");
      assertThat(counter(metrics, "fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"orders\","
          + "outcome=\"tagged\"}")).as("JDBC writes tagged").isGreaterThanOrEqualTo(4.0);
      assertThat(counter(metrics, "fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"orders\","
          + "outcome=\"blocked\"}")).as("JDBC writes blocked").isZero();
      assertThat(Http.awaitStatus(statusPort, "\"state\":\"HOLDING\"", Duration.ofSeconds(5))).contains(token);
    }
  }

  private static double counter(String metrics, String series) {
    for (String line : metrics.split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    throw new AssertionError("no series " + series + " in /metrics:\n" + metrics);
  }

  private static List<String> column(Connection c, String sql) throws Exception {
    List<String> out = new ArrayList<>();
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  private static void awaitRows(Connection c, String countSql, long atLeast) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    long n = 0;
    while (System.nanoTime() < deadline) {
      n = Long.parseLong(column(c, countSql).get(0));
      if (n >= atLeast) {
        return;
      }
      Thread.sleep(200);
    }
    throw new AssertionError(countSql + " = " + n + ", expected at least " + atLeast + " within 20 s");
  }
}
