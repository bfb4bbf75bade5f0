package dev.fencing.sample.inventory;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.fence.http.FenceHttpFilter;
import dev.fencing.fence.http.HttpFence;
import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.JdbcFenceStore;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;

/**
 * The downstream service of the demo: {@code POST /reservations} (form body {@code worker, transfer, amount}) adds the
 * amount to {@code stock.reserved} and inserts one {@code reservation} row, in one transaction in its own database,
 * and answers {@code 201}. The only fencing in its code is the HTTP fence in front of that endpoint
 * ({@link FenceHttpFilter}, lock {@code ledger}), whose highest token per lock lives in the service's own database
 * ({@link JdbcFenceStore}, the SQL fence's {@code fencing_fence} table), so that the HTTP fence and the database
 * fence agree. Run with the agent and {@code lease.enabled=false}: the token of each
 * request becomes the token of the service's own writes: the database fences check it on {@code stock} and stamp it
 * on each {@code reservation} row.
 *
 * <p>{@code GET /fence-metrics}: the HTTP fence's counters (Prometheus text). Arguments, {@code key=value}: port,
 * jdbc, lock (default ledger). Prints {@code SERVICE STARTED port=<port>}.
 */
public final class InventoryService {
  private final HikariDataSource pool;

  private InventoryService(HikariDataSource pool) {
    this.pool = pool;
  }

  public static void main(String[] args) throws IOException {
    Settings s = Settings.parse(args);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(s.get("jdbc"));
    config.setMaximumPoolSize(4);
    config.setPoolName("inventory");
    InventoryService service = new InventoryService(new HikariDataSource(config));

    HttpFence fence = new HttpFence(FencePolicy.forLocks(s.get("lock", "ledger")).build(),
        new JdbcFenceStore(service.pool));
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(s.get("port"))), 0);
    server.createContext("/reservations", service::reserve).getFilters().add(new FenceHttpFilter(fence));
    server.createContext("/fence-metrics", ex -> respond(ex, 200, fence.metrics().prometheusText()));
    server.setExecutor(Executors.newFixedThreadPool(4));
    server.start();
    System.out.println("SERVICE STARTED port=" + server.getAddress().getPort());
    System.out.flush();
  }

  private void reserve(HttpExchange ex) throws IOException {
    if (!ex.getRequestMethod().equals("POST")) {
      respond(ex, 405, "POST only");
      return;
    }
    Map<String, String> form = form(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement stock = c.prepareStatement("UPDATE stock SET reserved = reserved + ? WHERE sku = 'gold'");
          PreparedStatement insert = c.prepareStatement(
              "INSERT INTO reservation (worker, transfer, amount) VALUES (?, ?, ?)")) {
        int amount = Integer.parseInt(form.getOrDefault("amount", "0"));
        stock.setInt(1, amount);
        stock.executeUpdate();
        insert.setString(1, form.getOrDefault("worker", "?"));
        insert.setLong(2, Long.parseLong(form.getOrDefault("transfer", "0")));
        insert.setInt(3, amount);
        insert.executeUpdate();
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
      respond(ex, 201, "reserved");
    } catch (SQLException e) {
      System.out.println("RESERVE FAILED SQLSTATE=" + e.getSQLState() + " " + e.getMessage());
      respond(ex, 500, "SQLSTATE " + e.getSQLState() + ": " + e.getMessage());
    } catch (NumberFormatException e) {
      respond(ex, 400, "bad form: " + e.getMessage());
    }
  }

  private static Map<String, String> form(String body) {
    Map<String, String> form = new HashMap<>();
    for (String pair : body.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        form.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return form;
  }

  private static void respond(HttpExchange ex, int status, String text) throws IOException {
    byte[] body = text.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    ex.sendResponseHeaders(status, body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }
}
