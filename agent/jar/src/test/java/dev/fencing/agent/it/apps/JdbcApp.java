package dev.fencing.agent.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * An ordinary JDBC application (no fencing code) driven line by line on stdin, so a test can make it write, read,
 * pause and write again. Commands: {@code SQL <statement>} (Statement.execute), {@code PREP <statement>}
 * (PreparedStatement), {@code BATCH <stmt>;<stmt>...}, {@code QUERY <select>} (prints the first column of the first
 * row). Prints {@code OK <n>}, {@code ROW <value>} or {@code ERR <sqlstate> <message>} per command.
 */
public final class JdbcApp {
  private JdbcApp() {}

  public static void main(String[] args) throws Exception {
    Connection c = args.length > 1 ? DriverManager.getConnection(args[0], args[1], args.length > 2 ? args[2] : "")
        : DriverManager.getConnection(args[0]);
    System.out.println("APP STARTED");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {
      int sp = line.indexOf(' ');
      String cmd = sp < 0 ? line : line.substring(0, sp);
      String arg = sp < 0 ? "" : line.substring(sp + 1);
      try {
        switch (cmd) {
          case "SQL":
            try (Statement s = c.createStatement()) {
              s.execute(arg);
              System.out.println("OK " + s.getUpdateCount());
            }
            break;
          case "PREP":
            try (PreparedStatement ps = c.prepareStatement(arg)) {
              System.out.println("OK " + ps.executeUpdate());
            }
            break;
          case "BATCH":
            try (Statement s = c.createStatement()) {
              for (String part : arg.split(";")) {
                s.addBatch(part);
              }
              System.out.println("OK " + s.executeBatch().length);
            }
            break;
          case "QUERY":
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(arg)) {
              System.out.println(rs.next() ? "ROW " + rs.getString(1) : "ROW none");
            }
            break;
          default:
            System.out.println("ERR - unknown command " + cmd);
        }
      } catch (SQLException e) {
        System.out.println("ERR " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
      }
      System.out.flush();
    }
  }
}
