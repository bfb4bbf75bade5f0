package dev.fencing.outbox;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * PostgreSQL's wake-up: {@code LISTEN} on the outbox table's channel on a connection of its own, and a thread that
 * calls the relay back on each notification (the table's trigger notifies on commit). pgjdbc's
 * {@code PGConnection.getNotifications(int)} is reached by reflection, so the relay compiles without pgjdbc. When the
 * connection fails the listener opens another after a pause; the relay's slow poll covers the gap.
 *
 * <p>After each LISTEN, a notification sent from another connection must arrive: behind a pooler in transaction mode
 * (PgBouncer) the LISTEN stays on a server connection the pooler lends to other clients, and nothing ever reaches
 * this one. Then the listener gives up for good and tells the relay, which polls instead.
 */
final class PostgresListener implements AutoCloseable {
  private static final int WAIT_MILLIS = 500;
  /** How long the notification sent after LISTEN may take to arrive. */
  private static final long PROBE_MILLIS = 3000;

  private final OutboxRelay.ConnectionSource connections;
  private final String channel;
  private final Runnable wake;
  private final Runnable deaf;
  private final RelayLog log;
  private final Thread thread;
  private volatile boolean running = true;
  private volatile boolean listening;
  private volatile Connection connection;

  /** {@code deaf}: called once, when a LISTEN gets no notification; the listener has then stopped. */
  PostgresListener(OutboxRelay.ConnectionSource connections, String channel, Runnable wake, Runnable deaf,
      RelayLog log, OutboxRelay.Threads threads) {
    this.connections = connections;
    this.channel = channel;
    this.wake = wake;
    this.deaf = deaf;
    this.log = log;
    this.thread = threads.thread(this::run, "fencing-outbox-listen");
  }

  void start() {
    thread.start();
  }

  /** Whether LISTEN is in place right now. */
  boolean listening() {
    return listening;
  }

  private void run() {
    long pause = 1000;
    while (running) {
      try (Connection c = connections.open()) {
        connection = c;
        c.setAutoCommit(true);
        Method getNotifications = notifications(c);
        Object pg = c.unwrap(getNotifications.getDeclaringClass());
        try (Statement s = c.createStatement()) {
          s.execute("LISTEN " + quote(channel));
        }
        if (!notified(getNotifications, pg)) {
          try (Statement s = c.createStatement()) {
            s.execute("UNLISTEN " + quote(channel)); // most likely on the server connection that took the LISTEN
          } catch (SQLException e) {
            // the LISTEN goes with that server connection
          }
          running = false;
          deaf.run();
          return;
        }
        listening = true;
        pause = 1000;
        log.info("listening on PostgreSQL channel " + channel);
        wake.run(); // events committed before LISTEN took effect
        while (running) {
          Object[] got = (Object[]) getNotifications.invoke(pg, WAIT_MILLIS);
          if (got != null && got.length > 0) {
            wake.run();
          }
        }
      } catch (InvocationTargetException e) {
        failed(e.getCause());
      } catch (SQLException | ReflectiveOperationException | RuntimeException e) {
        failed(e);
      } finally {
        listening = false;
        connection = null;
      }
      if (running) {
        sleep(pause);
        pause = Math.min(30_000, pause * 2);
      }
    }
  }

  /**
   * Sends a notification on the channel from another connection and waits for it (or any other) to arrive here.
   */
  private boolean notified(Method getNotifications, Object pg) throws SQLException, ReflectiveOperationException {
    try (Connection other = connections.open();
        PreparedStatement ps = other.prepareStatement("SELECT pg_notify(?, 'fencing-outbox: is LISTEN heard?')")) {
      other.setAutoCommit(true);
      ps.setString(1, channel);
      ps.execute();
    }
    long end = System.nanoTime() + PROBE_MILLIS * 1_000_000;
    while (running && System.nanoTime() < end) {
      Object[] got = (Object[]) getNotifications.invoke(pg, WAIT_MILLIS);
      if (got != null && got.length > 0) {
        return true;
      }
    }
    return !running;
  }

  private void failed(Throwable e) {
    if (running) {
      log.warn("LISTEN on " + channel + " failed, polling until it is back: " + HttpDelivery.describe(e));
    }
  }

  /** pgjdbc's {@code PGConnection.getNotifications(int)}, from the class loader of the connection's driver. */
  private static Method notifications(Connection c) throws SQLException {
    try {
      Class<?> pg = Class.forName("org.postgresql.PGConnection", false, c.getClass().getClassLoader());
      return pg.getMethod("getNotifications", int.class);
    } catch (ReflectiveOperationException e) {
      throw new SQLException("LISTEN needs pgjdbc 42.2 or later (org.postgresql.PGConnection.getNotifications(int)): "
          + e, e);
    }
  }

  /** A quoted identifier: the channel is the table's name as written (letters, digits, _ and a dot). */
  static String quote(String identifier) {
    return "\"" + identifier.replace("\"", "\"\"") + "\"";
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(WAIT_MILLIS * 4L);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Connection c = connection;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        // closing
      }
    }
  }
}
