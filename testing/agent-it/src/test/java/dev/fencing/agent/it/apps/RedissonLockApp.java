package dev.fencing.agent.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * An ordinary application taking its own Redisson {@code RFencedLock} (no fencing code), driven on stdin. Arguments:
 * Redis address, the lock watchdog's timeout in ms, lock name, JDBC URL. Commands: {@code TOKEN}
 * ({@code lockAndGetToken()}, prints {@code OK token <n>}), {@code LOCK} ({@code lock()}, which issues a token
 * without returning it), {@code UNLOCK}, {@code SQL <statement>}.
 */
public final class RedissonLockApp {
  private RedissonLockApp() {}

  public static void main(String[] args) throws Exception {
    Config config = new Config();
    config.setLockWatchdogTimeout(Long.parseLong(args[1]));
    config.useSingleServer().setAddress(args[0]).setConnectionMinimumIdleSize(1).setConnectionPoolSize(2)
        .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2);
    RedissonClient redisson = Redisson.create(config);
    try (Connection c = DriverManager.getConnection(args[3])) {
      RFencedLock lock = redisson.getFencedLock(args[2]);
      System.out.println("APP STARTED");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
      for (String line; (line = in.readLine()) != null; ) {
        try {
          if (line.equals("TOKEN")) {
            System.out.println("OK token " + lock.lockAndGetToken());
          } else if (line.equals("LOCK")) {
            lock.lock();
            System.out.println("OK locked");
          } else if (line.equals("UNLOCK")) {
            lock.unlock();
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
          System.out.println("ERR " + e.toString().replace('\n', ' '));
        }
      }
    } finally {
      redisson.shutdown();
    }
  }
}
