package dev.fencing.agent.instrumentation.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Locale;

/** How a database session is made to carry (lock, token): DESIGN.md section 5. */
enum SessionDialect {
  /** Custom settings fencing.lock / fencing.token (and fencing.signature), session scope (is_local = false). */
  POSTGRESQL {
    @Override
    void setPair(Connection c, String lock, long token, String signature) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(signature == null
          ? "SELECT set_config('fencing.lock', ?, false), set_config('fencing.token', ?, false)"
          : "SELECT set_config('fencing.lock', ?, false), set_config('fencing.token', ?, false), "
              + "set_config('fencing.signature', ?, false)")) {
        ps.setString(1, lock);
        ps.setString(2, Long.toString(token));
        if (signature != null) {
          ps.setString(3, signature);
        }
        ps.executeQuery().close();
      }
    }

    @Override
    void clearPair(Connection c) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT set_config('fencing.lock', '', false), set_config('fencing.token', '', false)")) {
        ps.executeQuery().close();
      }
    }
  },
  /** User variables @fencing_lock / @fencing_token (and @fencing_signature). */
  MYSQL {
    @Override
    void setPair(Connection c, String lock, long token, String signature) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(signature == null ? "SET @fencing_lock = ?, @fencing_token = ?"
          : "SET @fencing_lock = ?, @fencing_token = ?, @fencing_signature = ?")) {
        ps.setString(1, lock);
        ps.setLong(2, token);
        if (signature != null) {
          ps.setString(3, signature);
        }
        ps.execute();
      }
    }

    @Override
    void clearPair(Connection c) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement("SET @fencing_lock = NULL, @fencing_token = NULL")) {
        ps.execute();
      }
    }
  },
  /** User variables @fencing_lock / @fencing_token (and @fencing_signature), one per SET in H2. */
  H2 {
    @Override
    void setPair(Connection c, String lock, long token, String signature) throws SQLException {
      try (PreparedStatement l = c.prepareStatement("SET @fencing_lock = ?");
          PreparedStatement t = c.prepareStatement("SET @fencing_token = ?")) {
        l.setString(1, lock);
        l.execute();
        t.setLong(1, token);
        t.execute();
      }
      if (signature != null) {
        try (PreparedStatement s = c.prepareStatement("SET @fencing_signature = ?")) {
          s.setString(1, signature);
          s.execute();
        }
      }
    }

    @Override
    void clearPair(Connection c) throws SQLException {
      try (PreparedStatement l = c.prepareStatement("SET @fencing_lock = NULL");
          PreparedStatement t = c.prepareStatement("SET @fencing_token = NULL")) {
        l.execute();
        t.execute();
      }
    }
  },
  /** A database the agent cannot tag: writes are decided (and blocked) but carry no token. */
  UNKNOWN {
    @Override
    void setPair(Connection c, String lock, long token, String signature) {}

    @Override
    void clearPair(Connection c) {}
  };

  /** Sets the pair, and the signature when it is not null (without a signing key nothing extra is sent). */
  abstract void setPair(Connection c, String lock, long token, String signature) throws SQLException;

  /**
   * Forgets the pair, so an untagged write on a pooled connection cannot borrow an earlier caller's token. A signature
   * left behind is harmless: it vouches only for the (lock, token) it was made for.
   */
  abstract void clearPair(Connection c) throws SQLException;

  static SessionDialect of(String jdbcUrl) {
    String u = jdbcUrl == null ? "" : jdbcUrl.toLowerCase(Locale.ROOT);
    if (u.startsWith("jdbc:postgresql:") || u.startsWith("jdbc:pgsql:")) {
      return POSTGRESQL;
    }
    if (u.startsWith("jdbc:mysql:") || u.startsWith("jdbc:mariadb:")) {
      return MYSQL;
    }
    if (u.startsWith("jdbc:h2:")) {
      return H2;
    }
    return UNKNOWN;
  }
}
