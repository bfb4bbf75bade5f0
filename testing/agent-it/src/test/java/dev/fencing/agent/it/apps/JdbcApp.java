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
 * (PreparedStatement), {@code BATCH <stmt>;<stmt>...}, {@code TXN <stmt>;<stmt>...} (one transaction), {@code LOAD <threads> <millis>} (throughput), {@code QUERY <select>} (prints the first column of the first
 * row), {@code POOL <write>|<query>} (HikariCP, the 4 other pooled connections at once), {@code FAULTY <runtime|error> <sql>}
 * (a statement whose getConnection() throws), {@code CHURN <connections> <statements> <sql>} (short-lived connections
 * and statements), {@code GC}, {@code BEGIN}, {@code COMMIT}, {@code AUTOCOMMIT}, {@code ROLLBACK} (the main
 * connection's transaction), {@code TIMED <sql>} (prints the time taken), {@code BG <auto|txn> <ms> <sql>} and
 * {@code STOP} (a background writer), {@code SCHEMA <name>} and {@code CATALOG <name>} (Connection.setSchema,
 * setCatalog). Prints {@code OK <n>}, {@code ROW <value>} or {@code ERR <sqlstate> <message>} per command.
 */
public final class JdbcApp {
  private JdbcApp() {}

  private static final java.util.concurrent.atomic.AtomicInteger NEXT_ROW = new java.util.concurrent.atomic.AtomicInteger(100);

  private static long load(String[] args, int threads, long millis) throws Exception {
    java.util.concurrent.atomic.LongAdder done = new java.util.concurrent.atomic.LongAdder();
    long end = System.nanoTime() + millis * 1_000_000;
    java.util.List<Thread> workers = new java.util.ArrayList<>();
    java.util.concurrent.atomic.AtomicReference<Exception> failure = new java.util.concurrent.atomic.AtomicReference<>();
    for (int t = 0; t < threads; t++) {
      int row = NEXT_ROW.getAndIncrement(); // a fresh row per thread and run: no row lock is shared
      Thread w = new Thread(() -> {
        try (Connection wc = DriverManager.getConnection(args[0]); Statement s = wc.createStatement()) {
          s.executeUpdate("INSERT INTO account VALUES (" + row + ", 0)");
          wc.setAutoCommit(false);
          while (System.nanoTime() < end) {
            s.executeUpdate("UPDATE account SET balance = balance + 1 WHERE id = " + row);
            Thread.sleep(1);
            s.executeUpdate("UPDATE account SET balance = balance - 1 WHERE id = " + row);
            wc.commit();
            done.increment();
          }
        } catch (Exception e) {
          failure.set(e);
        }
      });
      workers.add(w);
      w.start();
    }
    for (Thread w : workers) {
      w.join();
    }
    if (failure.get() != null) {
      throw failure.get();
    }
    return done.sum() * 1000 / millis;
  }

  /**
   * {@code real}, except that getConnection() throws: a driver (or a wrapper) breaking the JDBC contract in a method
   * only the agent calls. A dynamic proxy, which the agent instruments like any other Statement implementation.
   */
  private static Statement faulty(Statement real, String failure) {
    return (Statement) java.lang.reflect.Proxy.newProxyInstance(JdbcApp.class.getClassLoader(),
        new Class<?>[] {Statement.class}, (proxy, method, methodArgs) -> {
          if (method.getName().equals("getConnection")) {
            if (failure.equals("error")) {
              throw new NoClassDefFoundError("com/example/driver/Missing");
            }
            throw new IllegalStateException("driver bug: no connection");
          }
          try {
            return method.invoke(real, methodArgs);
          } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  private static Background background;

  /** The BG writer: counts statements that returned, and errors by SQLSTATE. */
  private static final class Background extends Thread {
    private final String[] args;
    private final boolean transactions;
    private final long sleepMillis;
    private final String sql;
    private volatile boolean stop;
    private int ok;
    private final java.util.TreeMap<String, Integer> errors = new java.util.TreeMap<>();

    Background(String[] args, boolean transactions, long sleepMillis, String sql) {
      super("bg-writer");
      this.args = args;
      this.transactions = transactions;
      this.sleepMillis = sleepMillis;
      this.sql = sql;
    }

    @Override
    public void run() {
      while (!stop) {
        // As a pool would: a connection the server ended (08xxx) is replaced, the loop goes on.
        try (Connection bc = DriverManager.getConnection(args[0]); Statement s = bc.createStatement()) {
          bc.setAutoCommit(!transactions);
          while (!stop && !bc.isClosed()) {
            try {
              s.execute(sql);
              if (transactions) {
                bc.commit();
              }
              ok++;
            } catch (SQLException e) {
              errors.merge(String.valueOf(e.getSQLState()), 1, Integer::sum);
              if (String.valueOf(e.getSQLState()).startsWith("08")) {
                break;
              }
              if (transactions) {
                try {
                  bc.rollback();
                } catch (SQLException ignored) {
                  // counted above
                }
              }
            }
            Thread.sleep(sleepMillis);
          }
        } catch (SQLException e) {
          errors.merge("connect-" + e.getSQLState(), 1, Integer::sum);
          try {
            Thread.sleep(100);
          } catch (InterruptedException ie) {
            return;
          }
        } catch (Exception e) {
          errors.merge(e.getClass().getSimpleName(), 1, Integer::sum);
          return;
        }
      }
    }

    String finish() throws InterruptedException {
      stop = true;
      join(30_000);
      return "OK " + ok + " ERR " + errors;
    }
  }

  public static void main(String[] args) throws Exception {
    javax.sql.DataSource pool = null;
    Connection c;
    if (args[0].startsWith("hikari:")) {
      com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
      config.setJdbcUrl(args[0].substring("hikari:".length()));
      if (args.length > 1) {
        config.setUsername(args[1]);
        config.setPassword(args.length > 2 ? args[2] : "");
      }
      config.setMaximumPoolSize(5); // the 4 the POOL command borrows, and the one the other commands use
      config.setMinimumIdle(5);
      pool = new com.zaxxer.hikari.HikariDataSource(config);
      c = pool.getConnection();
    } else {
      c = args.length > 1 ? DriverManager.getConnection(args[0], args[1], args.length > 2 ? args[2] : "")
          : DriverManager.getConnection(args[0]);
    }
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
          case "BEGIN":
            c.setAutoCommit(false);
            System.out.println("OK begun");
            break;
          case "SCHEMA":
            c.setSchema(arg);
            System.out.println("OK schema");
            break;
          case "CATALOG":
            c.setCatalog(arg);
            System.out.println("OK catalog");
            break;
          case "COMMIT":
            c.commit();
            System.out.println("OK committed");
            break;
          case "AUTOCOMMIT":
            c.setAutoCommit(true);
            System.out.println("OK autocommit");
            break;
          case "ROLLBACK":
            c.rollback();
            System.out.println("OK rolled back");
            break;
          case "TIMED":
            // TIMED <statement>: Statement.execute, printing the update count and how long it took in ms.
            try (Statement s = c.createStatement()) {
              long t0 = System.nanoTime();
              s.execute(arg);
              System.out.println("OK " + s.getUpdateCount() + " " + (System.nanoTime() - t0) / 1_000_000);
            }
            break;
          case "BG": {
            // BG <auto|txn> <sleep ms> <statement>: a background writer on a connection of its own, one statement
            // (autocommit, or each in a transaction of its own) every <sleep ms> until STOP.
            String[] p = arg.split(" ", 3);
            background = new Background(args, p[0].equals("txn"), Long.parseLong(p[1]), p[2]);
            background.start();
            System.out.println("OK started");
            break;
          }
          case "STOP":
            System.out.println(background.finish());
            background = null;
            break;
          case "COPYIN": {
            // COPYIN <COPY ... FROM STDIN>|<row>: pgjdbc's CopyManager (by reflection: the app is driver-neutral).
            String[] p = arg.split("\\|", 2);
            Object pg = c.unwrap(Class.forName("org.postgresql.PGConnection"));
            Object copy = pg.getClass().getMethod("getCopyAPI").invoke(pg);
            try {
              Object rows = copy.getClass().getMethod("copyIn", String.class, java.io.Reader.class)
                  .invoke(copy, p[0], new java.io.StringReader(p[1] + "\n"));
              System.out.println("OK " + rows);
            } catch (java.lang.reflect.InvocationTargetException e) {
              throw e.getCause() instanceof SQLException ? (SQLException) e.getCause() : e;
            }
            break;
          }
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
          case "TXN": {
            // TXN <stmt>;<stmt>...: one explicit transaction, committed, or rolled back on the first error.
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
              for (String part : arg.split(";")) {
                s.executeUpdate(part);
              }
              c.commit();
              System.out.println("OK committed");
            } catch (SQLException e) {
              c.rollback();
              throw e;
            } finally {
              c.setAutoCommit(true);
            }
            break;
          }
          case "LOAD": {
            // LOAD <threads> <millis>: each thread, on its own connection and row, runs transactions of
            // UPDATE; 1 ms of application work; UPDATE; COMMIT for <millis>. Prints the transactions per second.
            String[] p = arg.split(" ");
            System.out.println("ROW " + load(args, Integer.parseInt(p[0]), Long.parseLong(p[1])));
            break;
          }
          case "QUERY":
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(arg)) {
              System.out.println(rs.next() ? "ROW " + rs.getString(1) : "ROW none");
            }
            break;
          case "POOL": {
            // POOL <write sql>|<token query>: on the 4 other pooled connections at once, write and read the session token.
            String[] parts = arg.split("\\|");
            Connection[] held = new Connection[4];
            StringBuilder tokens = new StringBuilder();
            try {
              for (int i = 0; i < held.length; i++) {
                held[i] = pool.getConnection();
              }
              for (Connection pc : held) {
                try (Statement s = pc.createStatement()) {
                  s.executeUpdate(parts[0]);
                }
                try (Statement s = pc.createStatement(); ResultSet rs = s.executeQuery(parts[1])) {
                  rs.next();
                  tokens.append(tokens.length() == 0 ? "" : ",").append(rs.getString(1));
                }
              }
            } finally {
              for (Connection pc : held) {
                if (pc != null) {
                  pc.close();
                }
              }
            }
            System.out.println("ROW " + tokens);
            break;
          }
          case "FAULTY": {
            // FAULTY <runtime|error> <sql>: through a statement whose getConnection() (which the application never
            // calls, the agent does) throws an IllegalStateException or a NoClassDefFoundError.
            String[] p = arg.split(" ", 2);
            try (Statement s = faulty(c.createStatement(), p[0])) {
              s.execute(p[1]);
              System.out.println("OK " + s.getUpdateCount());
            }
            break;
          }
          case "CHURN": {
            // CHURN <connections> <statements per connection> <sql>: each on a fresh connection and prepared
            // statement, closed and dropped, as a pooled or short-lived application would.
            String[] p = arg.split(" ", 3);
            int n = 0;
            for (int i = 0; i < Integer.parseInt(p[0]); i++) {
              try (Connection cc = DriverManager.getConnection(args[0])) {
                for (int j = 0; j < Integer.parseInt(p[1]); j++) {
                  try (PreparedStatement ps = cc.prepareStatement(p[2])) {
                    n += ps.executeUpdate();
                  }
                }
              }
            }
            System.out.println("OK " + n);
            break;
          }
          case "GC": {
            // Collects, then prepares and runs one statement: the agent drops entries of collected keys as it goes.
            for (int i = 0; i < 3; i++) {
              System.gc();
              Thread.sleep(100);
              try (PreparedStatement ps = c.prepareStatement("SELECT 1")) {
                ps.executeQuery().close();
              }
            }
            System.out.println("OK gc");
            break;
          }
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
