package dev.fencing.fence.sql;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link BadSessionProperties} on an in-memory H2 with the Java trigger: user variables set as strings. */
class H2BadSessionIT extends BadSessionProperties {

  private static Connection connection;

  @BeforeAll
  static void start() throws SQLException {
    connection = DriverManager.getConnection("jdbc:h2:mem:bad-input;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000");
    new H2BadSessionIT().prepare(connection);
  }

  @AfterAll
  static void stop() throws SQLException {
    if (connection != null) {
      connection.close();
    }
  }

  @Override
  Connection connection() {
    return connection;
  }

  @Override
  void session(Connection c, String lock, String token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SET @fencing_lock = ?")) {
      ps.setString(1, lock);
      ps.execute();
    }
    try (PreparedStatement ps = c.prepareStatement("SET @fencing_token = ?")) {
      ps.setString(1, token);
      ps.execute();
    }
  }
}
