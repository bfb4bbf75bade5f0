package dev.fencing.it.quartz;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Date;
import java.util.Properties;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.JobExecutionException;
import org.quartz.JobKey;
import org.quartz.Scheduler;
import org.quartz.TriggerBuilder;
import org.quartz.impl.StdSchedulerFactory;
import org.quartz.utils.ConnectionProvider;

/**
 * An ordinary clustered Quartz node (no fencing code): a JDBC job store on PostgreSQL ({@code isClustered=true},
 * check-in every second), and the job {@code billing.settle} ({@link SettleJob}, {@code requestsRecovery}), which
 * writes one row per step to {@code quartz_row}. Arguments: JDBC URL (with its user), this node's name, and
 * {@code schedule} on the node that schedules the job's one run (2 s after it starts; either node may fire it). System
 * properties {@code app.steps} and {@code app.step-ms} shape a run. Prints {@code APP STARTED}, {@code JOB START
 * <node> recovering=<bool>}, {@code JOB DONE <node>} and {@code JOB FAILED <node> <sqlstate> <message>}. Outside
 * {@code dev.fencing.agent}, whose classes the agent never instruments: the job is the application's.
 */
public final class QuartzApp {
  private QuartzApp() {}

  static String url;
  static String node;

  public static void main(String[] args) throws Exception {
    url = args[0];
    node = args[1];
    Properties p = new Properties();
    p.setProperty("org.quartz.scheduler.instanceName", "fencing-it");
    p.setProperty("org.quartz.scheduler.instanceId", node);
    p.setProperty("org.quartz.scheduler.idleWaitTime", "1000");
    p.setProperty("org.quartz.threadPool.threadCount", "2");
    p.setProperty("org.quartz.jobStore.class", "org.quartz.impl.jdbcjobstore.JobStoreTX");
    p.setProperty("org.quartz.jobStore.driverDelegateClass", "org.quartz.impl.jdbcjobstore.PostgreSQLDelegate");
    p.setProperty("org.quartz.jobStore.dataSource", "ds");
    p.setProperty("org.quartz.jobStore.isClustered", "true");
    p.setProperty("org.quartz.jobStore.clusterCheckinInterval", "1000");
    p.setProperty("org.quartz.jobStore.acquireTriggersWithinLock", "true");
    p.setProperty("org.quartz.dataSource.ds.connectionProvider.class", Connections.class.getName());
    Scheduler scheduler = new StdSchedulerFactory(p).getScheduler();
    scheduler.start();
    if (args.length > 2 && args[2].equals("schedule")) {
      JobDetail job = JobBuilder.newJob(SettleJob.class).withIdentity(JobKey.jobKey("settle", "billing"))
          .requestRecovery(true).build();
      scheduler.scheduleJob(job, TriggerBuilder.newTrigger().withIdentity("settle-once", "billing")
          .startAt(new Date(System.currentTimeMillis() + 2000)).build());
    }
    System.out.println("APP STARTED");
    Thread.currentThread().join();
  }

  /** Quartz's connections: a new one per use (Quartz closes it). */
  public static final class Connections implements ConnectionProvider {
    @Override
    public Connection getConnection() throws SQLException {
      return DriverManager.getConnection(url);
    }

    @Override
    public void shutdown() {}

    @Override
    public void initialize() {}
  }

  /** One run: {@code app.steps} rows, {@code app.step-ms} apart, each naming the node and whether it is a recovery. */
  public static final class SettleJob implements Job {
    @Override
    public void execute(JobExecutionContext context) throws JobExecutionException {
      int steps = Integer.getInteger("app.steps", 20);
      long stepMs = Long.getLong("app.step-ms", 250);
      System.out.println("JOB START " + node + " recovering=" + context.isRecovering());
      try (Connection c = DriverManager.getConnection(url)) {
        for (int step = 1; step <= steps; step++) {
          try (PreparedStatement s = c.prepareStatement(
              "INSERT INTO quartz_row (node, step, recovering) VALUES (?, ?, ?)")) {
            s.setString(1, node);
            s.setInt(2, step);
            s.setBoolean(3, context.isRecovering());
            s.executeUpdate();
          }
          Thread.sleep(stepMs);
        }
      } catch (SQLException e) {
        System.out.println("JOB FAILED " + node + " " + e.getSQLState() + " " + e.getMessage());
        throw new JobExecutionException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new JobExecutionException(e);
      }
      System.out.println("JOB DONE " + node);
    }
  }
}
