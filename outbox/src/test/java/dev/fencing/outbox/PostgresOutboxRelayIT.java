package dev.fencing.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The relay's contract on a real PostgreSQL, and what only PostgreSQL has: LISTEN wakes the relay at commit. */
class PostgresOutboxRelayIT extends OutboxRelayContractIT {
  static PostgresServer server;

  @BeforeAll
  static void startServer() {
    server = PostgresServer.start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(server.jdbcUrl());
  }

  @Test
  void listenDeliversWithinMillisecondsOfTheCommitWhileThePollIsTenSeconds() throws Exception {
    String table = newTable();
    OutboxRelay relay = relay(table, b -> b.pollInterval(Duration.ofSeconds(10)));
    Receiver.await("LISTEN in place", WAIT, relay::listening);
    Thread.sleep(500); // the wake-up LISTEN itself gives is spent
    long[] committed = new long[1];
    for (int i = 0; i < 3; i++) {
      int before = receiver.requests().size();
      transaction(4, null, true, c -> Outbox.post(c, table, receiver.uri("/fast"), "x"));
      committed[0] = System.nanoTime();
      Receiver.await("delivered", Duration.ofSeconds(5), () -> receiver.requests().size() > before);
      long millis = (receiver.requests().get(before).arrivedNanos() - committed[0]) / 1_000_000;
      assertThat(millis).as("commit to delivery, ms (poll every 10 s)").isLessThan(2000);
      Thread.sleep(300);
    }
  }
}
