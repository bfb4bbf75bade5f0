package dev.fencing.it.api;

import dev.fencing.api.Fencing;
import dev.fencing.api.FencingContext;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A plain JDBC application that uses the optional fencing-api: its jobs ({@link Orders}) are annotated
 * {@code @Fenced("orders")} and read {@code Fencing.current()}. Driven on stdin, one answer line per command:
 * <ul>
 *   <li>{@code CURRENT}: {@code OK <context>} read outside every method;
 *   <li>{@code JOB <table> <note>}: the void job; {@code OK ran <what it saw>} or {@code OK skipped};
 *   <li>{@code REPORT <table> <note>}: the job with a result; {@code OK <what it saw>};
 *   <li>{@code LATE <table> <note> <millis>}: starts the stalling job on a thread ({@code OK started}), which later
 *       prints {@code LATE before <context> after <context> } and {@code OK <what it saw>} or
 *       {@code ERR <sqlstate> ...}: the API's answers when the job started and when it woke, and its insert's fate.
 * </ul>
 * What a job saw: {@code api=<context> session=<fencing.token>/<fencing.grant>}, the API's answer just before its
 * insert and the PostgreSQL session settings the agent tagged the insert with; a context is {@code <lock>/<token>/<grant>}
 * or {@code empty}.
 */
public final class ApiApp {
  static volatile String answer;
  static volatile String lateSeen;
  private static String url;

  private ApiApp() {}

  static String context() {
    FencingContext c = Fencing.current();
    return c.isPresent() ? c.lock() + "/" + c.token() + "/" + c.grant() : "empty";
  }

  static String write(String table, String note) throws SQLException {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      String api = context();
      s.executeUpdate("INSERT INTO " + table + " (note) VALUES ('" + note + "')");
      try (ResultSet rs = s.executeQuery(
          "SELECT current_setting('fencing.token', true), current_setting('fencing.grant', true)")) {
        rs.next();
        return "api=" + api + " session=" + blank(rs.getString(1)) + "/" + blank(rs.getString(2));
      }
    }
  }

  private static String blank(String s) {
    return s == null || s.isEmpty() ? "none" : s;
  }

  private static String error(Exception e) {
    if (e instanceof SQLException) {
      return "ERR " + ((SQLException) e).getSQLState() + " " + e.getMessage().replace('\n', ' ');
    }
    return "ERR " + e;
  }

  public static void main(String[] args) throws Exception {
    url = args[0];
    Class.forName(Orders.class.getName()); // defined at start, as a scheduler's job classes are
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
    System.out.println("APP STARTED");
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.trim().split(" ");
      String out;
      try {
        switch (p[0]) {
          case "CURRENT":
            out = "OK " + context();
            break;
          case "JOB":
            answer = "skipped";
            Orders.job(p[1], p[2]);
            out = "OK " + answer;
            break;
          case "REPORT":
            out = "OK " + Orders.report(p[1], p[2]);
            break;
          case "LATE":
            Thread t = new Thread(() -> {
              String r;
              try {
                Orders.lateJob(p[1], p[2], Long.parseLong(p[3]));
                r = "OK " + answer;
              } catch (Exception e) {
                r = error(e);
              }
              System.out.println("LATE " + lateSeen + " " + r);
            }, "late-job");
            t.start();
            out = "OK started";
            break;
          default:
            out = "ERR unknown command " + line;
        }
      } catch (Exception e) {
        out = error(e);
      }
      System.out.println(out);
    }
  }
}
