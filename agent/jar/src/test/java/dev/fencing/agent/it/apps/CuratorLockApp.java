package dev.fencing.agent.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

/**
 * An ordinary application taking its own Curator {@code InterProcessMutex} (no fencing code), driven on stdin.
 * Arguments: ZooKeeper connect string, session timeout in ms, lock path, JDBC URL. Commands: {@code LOCK} (blocks
 * until acquired, prints {@code OK locked}), {@code UNLOCK}, {@code SQL <statement>} (prints {@code OK <count>} or
 * {@code ERR <sqlstate> <message>}).
 */
public final class CuratorLockApp {
  private CuratorLockApp() {}

  public static void main(String[] args) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], Integer.parseInt(args[1]), 10_000,
        new RetryOneTime(200));
    client.start();
    InterProcessMutex mutex = new InterProcessMutex(client, args[2]);
    try (Connection c = DriverManager.getConnection(args[3])) {
      System.out.println("APP STARTED");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
      for (String line; (line = in.readLine()) != null; ) {
        try {
          if (line.equals("LOCK")) {
            mutex.acquire();
            System.out.println("OK locked");
          } else if (line.equals("UNLOCK")) {
            mutex.release();
            System.out.println("OK unlocked");
          } else if (line.startsWith("SQL ")) {
            try (Statement s = c.createStatement()) {
              System.out.println("OK " + s.executeUpdate(line.substring(4)));
            }
          } else {
            System.out.println("ERR unknown command " + line);
          }
        } catch (SQLException e) {
          System.out.println("ERR " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
        } catch (Exception e) {
          System.out.println("ERR " + e);
        }
      }
    }
    client.close();
  }
}
