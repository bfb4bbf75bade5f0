package dev.fencing.agent.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

/**
 * An ordinary application (no fencing or tracing code) making one HTTP POST (JDK HttpClient) and one JDBC write, the
 * calls the OpenTelemetry agent traces. Args: {@code <http url> <jdbc url>}. On each stdin line {@code GO} it makes
 * both calls and prints {@code HTTP <status>}, {@code ROW <@fencing_token after the write>} (or {@code ERR ...}).
 */
public final class TracedApp {
  private TracedApp() {}

  public static void main(String[] args) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    try (Connection c = DriverManager.getConnection(args[1]); Statement s = c.createStatement()) {
      System.out.println("APP STARTED");
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
      String line;
      while ((line = in.readLine()) != null) {
        if (!line.equals("GO")) {
          continue;
        }
        try {
          HttpResponse<Void> r = client.send(HttpRequest.newBuilder(URI.create(args[0]))
              .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.discarding());
          System.out.println("HTTP " + r.statusCode());
        } catch (Exception e) {
          System.out.println("ERR " + e);
        }
        try {
          s.execute("CREATE TABLE IF NOT EXISTS t(v INT)"); // a write too: only once the lease is held
          s.executeUpdate("INSERT INTO t(v) VALUES (1)");
          try (ResultSet rs = s.executeQuery("SELECT @fencing_token")) {
            rs.next();
            System.out.println("ROW " + rs.getString(1));
          }
        } catch (Exception e) {
          System.out.println("ERR " + e);
        }
        System.out.flush();
      }
    }
  }
}
