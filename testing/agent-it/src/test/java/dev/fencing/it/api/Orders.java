package dev.fencing.it.api;

import dev.fencing.api.Fenced;

/** The application's jobs, declared as sections of lock "orders" by annotation alone (no fencing.sections). */
public final class Orders {
  private Orders() {}

  /** A job that must run on one replica: skipped where this JVM does not hold "orders". */
  @Fenced("orders")
  public static void job(String table, String note) throws Exception {
    ApiApp.answer = "ran " + ApiApp.write(table, note);
  }

  /** A section with a result: always runs, its writes decided by "orders". */
  @Fenced("orders")
  public static String report(String table, String note) throws Exception {
    return ApiApp.write(table, note);
  }

  /** A job that stalls between its start and its write. */
  @Fenced("orders")
  public static void lateJob(String table, String note, long millis) throws Exception {
    String before = ApiApp.context();
    Thread.sleep(millis);
    ApiApp.lateSeen = "before " + before + " after " + ApiApp.context();
    ApiApp.answer = ApiApp.write(table, note);
  }
}
