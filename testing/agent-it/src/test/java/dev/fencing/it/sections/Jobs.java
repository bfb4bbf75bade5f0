package dev.fencing.it.sections;

import java.sql.SQLException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/** The declared sections. */
public final class Jobs {
  static final ExecutorService POOL = Executors.newFixedThreadPool(2, r -> {
    Thread t = new Thread(r, "jobs-pool");
    t.setDaemon(true);
    return t;
  });

  private Jobs() {}

  public static void jobA(String value) throws SQLException {
    SectionsApp.ran = true;
    SectionsApp.insert("table_a", value);
  }

  public static void jobB(String value) throws SQLException {
    SectionsApp.ran = true;
    SectionsApp.insert("table_b", value);
  }

  public static int reportA(String value) throws SQLException {
    return SectionsApp.insert("table_a", value);
  }

  public static void handOffA(String value) throws Exception {
    SectionsApp.ran = true;
    try {
      POOL.submit(() -> SectionsApp.insert("table_a", value)).get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw (Exception) e.getCause();
    }
  }

  public static void lateA(String value, long millis) throws Exception {
    Thread.sleep(millis); // the holder is paused meanwhile
    SectionsApp.insert("table_a", value);
  }
}
