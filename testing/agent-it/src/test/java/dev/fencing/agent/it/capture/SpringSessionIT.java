package dev.fencing.agent.it.capture;

import dev.fencing.agent.it.AgentProcesses;

import static dev.fencing.agent.it.Checks.count;
import static dev.fencing.agent.it.SpringReplicas.schemaOfTheApp;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.SpringApp;
import java.net.CookieManager;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The default caller exemption of Spring Session (fencing.exempt.callers): the Spring Boot sample with Spring Session
 * JDBC (profile "session"), on a standby (another JVM holds the JVM-wide lock). Spring Session's
 * SessionRepositoryFilter is below every request; the session store's own writes pass (a visitor's session is saved and
 * read back), while a request's own insert into an unfenced table is refused (FN003), as on any standby.
 */
class SpringSessionIT {
  /** The agent's own logic (which frame decides an exemption), the same on every Java. */
  static List<Path> newestJava() {
    return AgentProcesses.newestJava();
  }

  @ParameterizedTest
  @MethodSource("newestJava")
  void aStandbysSessionStoreWritesPassAndItsRequestsOwnWritesAreRefused(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute(schemaOfTheApp()); // the DBA's part: the app's tables, Spring Session's among them; no fence
      }
      String lock = "lock=orders-web,etcd.endpoints=" + etcd.endpoints();
      try (AgentProcesses.Agent holder = AgentProcesses.start(javaHome, "holder", lock)) {
        holder.awaitState("HOLDING", Duration.ofSeconds(15));
        int port = Ports.freePort();
        // A standby starts without writing (SQL init off, the job far off): its writes would be refused, as meant.
        try (SpringApp standby = SpringApp.start(javaHome, "replica-b", pg.jdbcUrl(), pg.user(),
            lock + ",http.port=" + port, Duration.ofSeconds(120), "-Dspring.profiles.active=session",
            "-Dspring.sql.init.mode=never", "-Dapp.settlement.initial-delay-ms=3600000")) {
          Http.awaitStatus(port, "\"state\":\"STANDBY\"", Duration.ofSeconds(15));

          // The session store's writes (JdbcIndexedSessionRepository, at the end of each request) are exempt.
          HttpClient visitor = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();
          assertThat(get(visitor, standby.port(), "/visits").body()).isEqualTo("1");
          assertThat(get(visitor, standby.port(), "/visits").body()).as("the session was stored and read back")
              .isEqualTo("2");
          try (Connection c = DriverManager.getConnection(url)) {
            assertThat(count(c, "SELECT count(*) FROM spring_session")).isEqualTo(1);
          }

          // The request's own write, made by the application's controller below the same filter, is not.
          HttpResponse<String> post = standby.postJson("/orders", "{\"item\":\"standby\",\"quantity\":1}");
          assertThat(post.statusCode()).as("POST /orders on the standby: %s", post.body()).isEqualTo(500);
          assertThat(standby.jvm().output()).contains("Fencing Agent blocked a jdbc side effect: lock 'orders-web'");
          try (Connection c = DriverManager.getConnection(url)) {
            assertThat(count(c, "SELECT count(*) FROM orders")).as("orders written by the standby").isZero();
          }
          String metrics = Http.get("http://127.0.0.1:" + port + "/metrics");
          assertThat(metrics).containsPattern("fencing_side_effects_total\\{[^}]*lock=\"orders-web\"[^}]*"
              + "outcome=\"exempt\"[^}]*} [1-9]");
        }
      }
    }
  }

  private static HttpResponse<String> get(HttpClient client, int port, String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
