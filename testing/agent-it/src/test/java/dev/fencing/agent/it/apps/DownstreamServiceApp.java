package dev.fencing.agent.it.apps;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.fence.http.FenceHttpFilter;
import dev.fencing.fence.http.HttpFence;
import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.InMemoryFenceStore;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A downstream service with no fencing code and no HTTP fence: each POST inserts one row into {@code ledger} through
 * a one-connection HikariCP pool, served by the JDK HttpServer and by a Jetty servlet. Paths: {@code /direct} writes
 * on the request thread, {@code /executor} on a thread pool, {@code /async} in a CompletableFuture on the common
 * pool. Answers 200 "OK", or 500 "SQLSTATE <state>" (also printed as {@code WRITE <path> <state>}). The JDK server's
 * {@code /fenced/...} paths sit behind the HTTP fence (lock xhop, in-memory store); {@code GET /fence-metrics} shows
 * its counters. {@code /relay} (both servers) makes the service's own HTTP call (JDK HttpClient) to its JDK server's
 * {@code /echo}, which prints {@code RELAYED <via> token=[...] grant=[...]}: what the relayed call carried.
 * Args: jdbc URL. Prints {@code APP STARTED jdk=<port> servlet=<port>}.
 */
public final class DownstreamServiceApp {
  private DownstreamServiceApp() {}

  private static HikariDataSource pool;
  private static volatile int jdkPort;
  private static final java.net.http.HttpClient CLIENT = java.net.http.HttpClient.newHttpClient();

  /** The service's own side effect made for the inbound request: a POST to its /echo. */
  static String relay(String via) throws Exception {
    java.net.http.HttpResponse<String> r = CLIENT.send(java.net.http.HttpRequest.newBuilder(
            java.net.URI.create("http://127.0.0.1:" + jdkPort + "/echo?via=" + via))
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("x")).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    return r.statusCode() == 200 ? "OK" : "ERROR " + r.statusCode();
  }
  private static final ExecutorService EXECUTOR = Executors.newFixedThreadPool(2);

  /** A job scheduler's pool: tasks ordered by priority, in natural order or by a comparator on the task's type. */
  private static final ExecutorService BY_PRIORITY = new java.util.concurrent.ThreadPoolExecutor(1, 1, 0,
      java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.PriorityBlockingQueue<>());
  private static final ExecutorService BY_COMPARATOR = new java.util.concurrent.ThreadPoolExecutor(1, 1, 0,
      java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.PriorityBlockingQueue<Runnable>(11,
          java.util.Comparator.comparingInt(r -> ((PriorityTask) r).priority)));

  /** A task that knows its priority, as the tasks of a priority pool must. */
  static final class PriorityTask implements Runnable, Comparable<PriorityTask> {
    final int priority;
    final long sleepMs;
    final CompletableFuture<String> done = new CompletableFuture<>();

    PriorityTask(int priority, long sleepMs) {
      this.priority = priority;
      this.sleepMs = sleepMs;
    }

    @Override
    public void run() {
      sleepQuietly(sleepMs);
      done.complete("OK");
    }

    @Override
    public int compareTo(PriorityTask other) {
      return Integer.compare(priority, other.priority);
    }
  }

  /** Runs two tasks on the pool, so that the queue compares them; "OK" when both ran. */
  static String byPriority(ExecutorService pool) throws Exception {
    PriorityTask first = new PriorityTask(2, 0);
    PriorityTask second = new PriorityTask(1, 0);
    pool.execute(new PriorityTask(0, 50)); // keeps the worker busy, so that the next two wait in the queue
    pool.execute(first);
    pool.execute(second);
    return first.done.get(5, java.util.concurrent.TimeUnit.SECONDS) + second.done.get(5, java.util.concurrent.TimeUnit.SECONDS);
  }

  private static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Runs the write where the path says; returns "OK" or "SQLSTATE <state>". */
  static String write(String path, int amount) throws Exception {
    CompletableFuture<String> result;
    if (path.endsWith("/executor")) {
      result = CompletableFuture.completedFuture(EXECUTOR.submit(() -> insert(amount)).get());
    } else if (path.endsWith("/async")) {
      result = CompletableFuture.supplyAsync(() -> insert(amount));
    } else {
      result = CompletableFuture.completedFuture(insert(amount));
    }
    String outcome = result.get();
    System.out.println("WRITE " + path + " " + outcome);
    System.out.flush();
    return outcome;
  }

  static String insert(int amount) {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO ledger (amount) VALUES (?)")) {
      ps.setInt(1, amount);
      ps.executeUpdate();
      return "OK";
    } catch (SQLException e) {
      return "SQLSTATE " + e.getSQLState();
    }
  }

  static int amount(String query) {
    return query == null ? 1 : Integer.parseInt(query.replace("amount=", ""));
  }

  public static void main(String[] args) throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(args[0]);
    config.setMaximumPoolSize(1); // one physical session: a later request must not inherit an earlier token
    pool = new HikariDataSource(config);

    HttpServer jdk = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    com.sun.net.httpserver.HttpHandler handler = (HttpExchange ex) -> {
      ex.getRequestBody().readAllBytes();
      String outcome;
      try {
        outcome = write("jdk" + ex.getRequestURI().getPath(), amount(ex.getRequestURI().getQuery()));
      } catch (Exception e) {
        outcome = "ERROR " + e;
      }
      byte[] body = outcome.getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(outcome.equals("OK") ? 200 : 500, body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    };
    jdk.createContext("/", handler);
    jdk.createContext("/echo", ex -> {
      ex.getRequestBody().readAllBytes();
      System.out.println("RELAYED " + ex.getRequestURI().getQuery().replace("via=", "") + " token="
          + ex.getRequestHeaders().get("Fencing-Token") + " grant=" + ex.getRequestHeaders().get("Fencing-Grant"));
      System.out.flush();
      ex.sendResponseHeaders(200, -1);
      ex.close();
    });
    // A request's work handed to priority pools: the agent must not break their ordering (ClassCastException).
    jdk.createContext("/priority", ex -> {
      ex.getRequestBody().readAllBytes();
      String outcome;
      try {
        outcome = byPriority(BY_PRIORITY) + " " + byPriority(BY_COMPARATOR);
      } catch (Throwable e) {
        outcome = "ERROR " + e;
      }
      System.out.println("PRIORITY " + outcome);
      System.out.flush();
      ex.sendResponseHeaders(outcome.equals("OKOK OKOK") ? 200 : 500, -1);
      ex.close();
    });
    jdk.createContext("/relay", ex -> {
      ex.getRequestBody().readAllBytes();
      String outcome;
      try {
        outcome = relay("jdk");
      } catch (Exception e) {
        outcome = "ERROR " + e;
      }
      ex.sendResponseHeaders(outcome.equals("OK") ? 200 : 500, -1);
      ex.close();
    });
    HttpFence fence = new HttpFence(FencePolicy.forLocks("xhop").build(), new InMemoryFenceStore());
    jdk.createContext("/fenced/", handler).getFilters().add(new FenceHttpFilter(fence));
    jdk.createContext("/fence-metrics", ex -> {
      byte[] body = fence.metrics().prometheusText().getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(200, body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    });
    jdk.setExecutor(Executors.newFixedThreadPool(2));
    jdk.start();
    jdkPort = jdk.getAddress().getPort();

    Server jetty = new Server();
    ServerConnector connector = new ServerConnector(jetty);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    jetty.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    context.addServlet(new ServletHolder(new HttpServlet() {
      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        req.getInputStream().readAllBytes();
        String outcome;
        try {
          outcome = req.getRequestURI().equals("/relay") ? relay("servlet")
              : write("servlet" + req.getRequestURI(), amount(req.getQueryString()));
        } catch (Exception e) {
          outcome = "ERROR " + e;
        }
        resp.setStatus(outcome.equals("OK") ? 200 : 500);
        resp.getWriter().write(outcome);
      }
    }), "/*");
    jetty.setHandler(context);
    jetty.start();

    System.out.println("APP STARTED jdk=" + jdk.getAddress().getPort() + " servlet=" + connector.getLocalPort());
    System.out.flush();
    Thread.currentThread().join();
  }
}
