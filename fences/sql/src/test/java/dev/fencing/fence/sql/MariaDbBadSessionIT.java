package dev.fencing.fence.sql;

import dev.fencing.testing.MariaDbServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link BadSessionProperties} on a real MariaDB: user variables set as strings (NULL when unset). */
class MariaDbBadSessionIT extends BadSessionProperties {

  private static MariaDbServer server;
  private static Connection connection;

  @BeforeAll
  static void start() throws SQLException {
    server = MariaDbServer.start();
    connection = DriverManager.getConnection(server.jdbcUrl());
    new MariaDbBadSessionIT().prepare(connection);
  }

  @AfterAll
  static void stop() throws SQLException {
    if (connection != null) {
      connection.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Override
  Connection connection() {
    return connection;
  }

  @Override
  void session(Connection c, String lock, String token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SET @fencing_lock = ?, @fencing_token = ?")) {
      ps.setString(1, lock);
      ps.setString(2, token);
      ps.execute();
    }
  }
}
