package dev.fencing.it.sections;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A plain JDBC application with no fencing code, whose jobs are declared as sections by the agent's configuration
 * ({@code fencing.sections=dev.fencing.it.sections.Jobs#jobA@lock-a,...}); outside the package {@code dev.fencing.agent},
 * whose classes the agent never instruments. Driven on stdin, one answer line per command:
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
  static volatile boolean ran;

  private SectionsApp() {}

  static String url;

  public static int insert(String table, String value) throws SQLException {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      return s.executeUpdate("INSERT INTO " + table + " (note) VALUES ('" + value + "')");
    }
  }

  private static String job(String which, String value) throws Exception {
    ran = false;
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
    return ran ? "OK ran" : "OK skipped";
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
