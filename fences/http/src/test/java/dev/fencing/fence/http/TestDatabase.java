package dev.fencing.fence.http;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.testing.MariaDbServer;
import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A real database for the JDBC store tests: PostgreSQL and MariaDB spawned by the harness, or in-memory H2. A pooled
 * DataSource for the store, plain connections for the SQL writers, and the SQL fence's session values per dialect.
 */
final class TestDatabase implements AutoCloseable {

  enum Kind { POSTGRESQL, MARIADB, H2 }

  private final Kind kind;
  private final String url;
  private final Runnable stopServer;
  private final HikariDataSource pool;

  private TestDatabase(Kind kind, String url, Runnable stopServer) {
    this.kind = kind;
    this.url = url;
    this.stopServer = stopServer;
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(16);
    config.setPoolName("fence-store-" + kind.name().toLowerCase(java.util.Locale.ROOT));
    this.pool = new HikariDataSource(config);
  }

  static TestDatabase postgres() {
    PostgresServer server = PostgresServer.start();
    return new TestDatabase(Kind.POSTGRESQL, server.jdbcUrl(), server::close);
  }

  static TestDatabase mariadb() {
    MariaDbServer server = MariaDbServer.start();
    return new TestDatabase(Kind.MARIADB, server.jdbcUrl(), server::close);
  }

  static TestDatabase h2(String name) {
    return new TestDatabase(Kind.H2, "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000", null);
  }

  Kind kind() {
    return kind;
  }

  HikariDataSource dataSource() {
    return pool;
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(url);
  }

  /** The fence table alone, as {@code sql install} creates it, for tests of the store without a SQL fence. */
  void createFenceTable() throws SQLException {
    try (Connection c = connect()) {
      exec(c, "CREATE TABLE IF NOT EXISTS fencing_fence (lock_name varchar(128) PRIMARY KEY, token bigint NOT NULL,"
          + " updated_at " + (kind == Kind.MARIADB ? "DATETIME(6)" : "timestamp") + ")");
    }
  }

  /** Sets the session values the SQL fence reads (what the agent does on every JDBC connection). */
  /** As {@link #session(Connection, String, long)}, with the grant id the agent sets beside the pair. */
  void session(Connection c, String lock, long token, String grant) throws SQLException {
    session(c, lock, token);
    switch (kind) {
      case POSTGRESQL:
        try (PreparedStatement ps = c.prepareStatement("SELECT set_config('fencing.grant', ?, false)")) {
          ps.setString(1, grant);
          ps.execute();
        }
        break;
      default:
        try (PreparedStatement ps = c.prepareStatement("SET @fencing_grant = ?")) {
          ps.setString(1, grant);
          ps.execute();
        }
        break;
    }
  }

  void session(Connection c, String lock, long token) throws SQLException {
    switch (kind) {
      case POSTGRESQL:
        try (PreparedStatement ps = c.prepareStatement("SELECT set_config('fencing.lock', ?, false), "
            + "set_config('fencing.token', ?, false)")) {
          ps.setString(1, lock);
          ps.setString(2, Long.toString(token));
          ps.execute();
        }
        break;
      case MARIADB:
        try (PreparedStatement ps = c.prepareStatement("SET @fencing_lock = ?, @fencing_token = ?")) {
          ps.setString(1, lock);
          ps.setLong(2, token);
          ps.execute();
        }
        break;
      default:
        exec(c, "SET @fencing_lock = '" + lock + "'");
        exec(c, "SET @fencing_token = " + token);
        break;
    }
  }

  static void exec(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  @Override
  public void close() {
    try {
      pool.close();
    } finally {
      if (stopServer != null) {
        stopServer.run();
      }
    }
  }
}
