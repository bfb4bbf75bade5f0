package dev.fencing.fence.sql;

import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link BadSessionProperties} on a real PostgreSQL 15: session settings set with set_config. */
class PostgresBadSessionIT extends BadSessionProperties {

  private static PostgresServer server;
  private static Connection connection;

  @BeforeAll
  static void start() throws SQLException {
    server = PostgresServer.start();
    connection = DriverManager.getConnection(server.jdbcUrl());
    new PostgresBadSessionIT().prepare(connection);
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
    try (PreparedStatement ps = c.prepareStatement("SELECT set_config('fencing.lock', ?, false), "
        + "set_config('fencing.token', ?, false)")) {
      ps.setString(1, lock == null ? "" : lock);
      ps.setString(2, token == null ? "" : token);
      ps.execute();
    }
  }
}
