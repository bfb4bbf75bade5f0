package dev.fencing.it.leader;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.zookeeper.leader.LeaderInitiator;
import org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry;

/**
 * An ordinary application electing a leader with Spring Integration (no fencing code): {@code selector} uses the
 * ZooKeeper {@link LeaderInitiator} (a Curator LeaderSelector whose {@code takeLeadership} only waits),
 * {@code registry} a {@link LockRegistryLeaderInitiator} over a {@link ZookeeperLockRegistry}. The leader's work
 * starts in {@code onGranted}, on a scheduler: every 200 ms one row into {@code leader_work} and one into
 * {@code leader_log}, one statement each; a refused one prints {@code WRITE-ERR <table> <SQLSTATE>}. Arguments:
 * mode, ZooKeeper connect string, session timeout ms, JDBC URL, writer name. Prints {@code GRANTED} and
 * {@code REVOKED}. Outside {@code dev.fencing.agent}, which the agent never instruments.
 */
public final class LeaderApp extends DefaultCandidate {
  private final String jdbcUrl;
  private final String writer;
  private volatile ScheduledExecutorService scheduler;
  private Connection connection;

  private LeaderApp(String jdbcUrl, String writer) {
    super(writer, "ledger");
    this.jdbcUrl = jdbcUrl;
    this.writer = writer;
  }

  @Override
  public void onGranted(Context ctx) {
    ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor();
    s.scheduleWithFixedDelay(this::work, 0, 200, TimeUnit.MILLISECONDS);
    scheduler = s;
    System.out.println("GRANTED");
  }

  @Override
  public void onRevoked(Context ctx) {
    ScheduledExecutorService s = scheduler;
    if (s != null) {
      s.shutdownNow();
    }
    System.out.println("REVOKED");
  }

  private void work() {
    insert("leader_work");
    insert("leader_log");
  }

  private void insert(String table) {
    try {
      if (connection == null) {
        connection = DriverManager.getConnection(jdbcUrl);
      }
      try (PreparedStatement ps = connection.prepareStatement("INSERT INTO " + table + " (writer) VALUES (?)")) {
        ps.setString(1, writer);
        ps.executeUpdate();
      }
    } catch (SQLException e) {
      System.out.println("WRITE-ERR " + table + " " + e.getSQLState());
    }
  }

  public static void main(String[] args) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[1], Integer.parseInt(args[2]), 10_000,
        new RetryOneTime(200));
    client.start();
    LeaderApp candidate = new LeaderApp(args[3], args[4]);
    if (args[0].equals("selector")) {
      LeaderInitiator initiator = new LeaderInitiator(client, candidate, "/leaders");
      initiator.start();
    } else {
      LockRegistryLeaderInitiator initiator =
          new LockRegistryLeaderInitiator(new ZookeeperLockRegistry(client, "/registry"), candidate);
      initiator.start();
    }
    System.out.println("APP STARTED");
    Thread.sleep(Long.MAX_VALUE);
  }
}
