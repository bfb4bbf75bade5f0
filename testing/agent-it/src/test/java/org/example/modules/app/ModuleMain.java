package org.example.modules.app;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Properties;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;

/**
 * Application code deployed as a module: it, its JDBC driver (H2) and its HTTP client (Apache HttpClient 5) are all
 * defined by the module's class loader. No fencing code; errors go to the caller as they are.
 */
public final class ModuleMain {
  private ModuleMain() {}

  /** Writes through Statement.execute, executeUpdate and a PreparedStatement, reads the session's token, posts once. */
  public static String run(String jdbcUrl, String httpUrl) throws Exception {
    String token;
    int updated = 0;
    try (Connection c = new org.h2.Driver().connect(jdbcUrl, new Properties()); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS t(id INT PRIMARY KEY, v INT)");
      updated += s.executeUpdate("MERGE INTO t KEY(id) VALUES (1, 1)");
      try (PreparedStatement p = c.prepareStatement("UPDATE t SET v = v + 1 WHERE id = 1")) {
        updated += p.executeUpdate();
      }
      try (ResultSet rs = s.executeQuery("SELECT @fencing_token")) {
        rs.next();
        token = rs.getString(1);
      }
    }
    int status;
    try (CloseableHttpClient client = HttpClients.createDefault()) {
      status = client.execute(new HttpPost(httpUrl), response -> response.getCode());
    }
    return "updated=" + updated + " session-token=" + token + " http=" + status;
  }

  /** One write (after the lease is gone: the agent's deliberate SQLException reaches the caller). */
  public static String write(String jdbcUrl) throws Exception {
    try (Connection c = new org.h2.Driver().connect(jdbcUrl, new Properties()); Statement s = c.createStatement()) {
      return "updated=" + s.executeUpdate("UPDATE t SET v = 0 WHERE id = 1");
    }
  }
}
