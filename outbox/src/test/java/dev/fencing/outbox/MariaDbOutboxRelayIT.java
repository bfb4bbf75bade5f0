package dev.fencing.outbox;

import dev.fencing.testing.MariaDbServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The relay's contract on a real MariaDB (FOR UPDATE SKIP LOCKED, polling). */
class MariaDbOutboxRelayIT extends OutboxRelayContractIT {
  static MariaDbServer server;

  @BeforeAll
  static void startServer() {
    server = MariaDbServer.start();
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
}
