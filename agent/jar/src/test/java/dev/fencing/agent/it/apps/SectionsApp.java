package dev.fencing.agent.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A plain JDBC application with no fencing code, whose jobs are declared as sections by the agent's configuration
 * ({@code fencing.sections=...SectionsApp$Jobs#jobA@lock-a,...}). Driven on stdin, one answer line per command:
 * <ul>
 *   <li>{@code OUT <sql>}: a write outside every section;
 *   <li>{@code JOBA <value>}, {@code JOBB <value>}: the void jobs (insert into table_a, table_b); {@code OK ran} or
 *       {@code OK skipped} (the body did not run);
 *   <li>{@code REPORTA <value>}: a section of lock-a that returns the rows it wrote;
 *   <li>{@code HANDOFFA <value>}: a void section of lock-a whose write runs on an executor thread;
 *   <li>{@code LATEA <value> <millis>}: starts jobA's slow twin on a thread (answer {@code OK started}); it enters
 *       the section at once, sleeps, then writes, and prints {@code LATE OK ...} or {@code LATE ERR <sqlstate> ...}.
 * </ul>
 */
public final class SectionsApp {
  private SectionsApp() {}

  static String url;

  /** The declared sections. */
  public static final class Jobs {
    static volatile boolean ran;
    static final ExecutorService POOL = Executors.newFixedThreadPool(2);

    private Jobs() {}

    public static void jobA(String value) throws SQLException {
      ran = true;
      insert("table_a", value);
    }

    public static void jobB(String value) throws SQLException {
      ran = true;
      insert("table_b", value);
    }

    public static int reportA(String value) throws SQLException {
      return insert("table_a", value);
    }

    public static void handOffA(String value) throws Exception {
      ran = true;
      try {
        POOL.submit(() -> insert("table_a", value)).get(30, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        throw (Exception) e.getCause();
      }
    }

    public static void lateA(String value, long millis) throws Exception {
      Thread.sleep(millis); // the holder is paused meanwhile
      insert("table_a", value);
    }
  }

  static int insert(String table, String value) throws SQLException {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      return s.executeUpdate("INSERT INTO " + table + " (note) VALUES ('" + value + "')");
    }
  }

  private static String job(String which, String value) throws Exception {
    Jobs.ran = false;
    switch (which) {
      case "JOBA":
        Jobs.jobA(value);
        break;
      case "JOBB":
        Jobs.jobB(value);
        break;
      default:
        Jobs.handOffA(value);
    }
    return Jobs.ran ? "OK ran" : "OK skipped";
  }

  private static String error(Exception e) {
    if (e instanceof SQLException) {
      return "ERR " + ((SQLException) e).getSQLState() + " " + e.getMessage().replace('\n', ' ');
    }
    return "ERR " + e;
  }

  public static void main(String[] args) throws Exception {
    url = args[0];
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
    System.out.println("APP STARTED");
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.trim().split(" ", 2);
      String answer;
      try {
        switch (p[0]) {
          case "OUT":
            try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
              answer = "OK " + s.executeUpdate(p[1]);
            }
            break;
          case "JOBA":
          case "JOBB":
          case "HANDOFFA":
            answer = job(p[0], p[1]);
            break;
          case "REPORTA":
            answer = "OK " + Jobs.reportA(p[1]);
            break;
          case "LATEA":
            String[] a = p[1].split(" ");
            Thread t = new Thread(() -> {
              String r;
              try {
                Jobs.lateA(a[0], Long.parseLong(a[1]));
                r = "OK";
              } catch (Exception e) {
                r = error(e);
              }
              System.out.println("LATE " + r);
            }, "late-job");
            t.start();
            answer = "OK started";
            break;
          default:
            answer = "ERR unknown command " + line;
        }
      } catch (Exception e) {
        answer = error(e);
      }
      System.out.println(answer);
    }
  }
}
