package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A real PgBouncer (Debian {@code pgbouncer}) in front of a {@link PostgresServer}, on its own free loopback port, in
 * transaction (or statement) pooling mode with a small server pool: the setup in which a database session's state
 * follows the server backend, not the client connection. It reaches PostgreSQL over TCP, or over the server's Unix
 * socket ({@link Backend#UNIX_SOCKET}, the usual set-up when both run on one host). Trust authentication; every database of the server is
 * reachable under its own name. As root it runs as user {@code postgres}, as PgBouncer refuses to run as root.
 */
public final class PgBouncer implements AutoCloseable {
  private static final String INSTALL_HINT = " is missing: run `apt-get update && apt-get install -y pgbouncer` "
      + "(Debian 12, PgBouncer 1.18) — the pooler tests need a real PgBouncer";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(20);
  /** The psql beside the PostgreSQL the harness runs ({@code -Dfencing.it.postgres.bin}), else the one on PATH. */
  private static final Path PSQL = PostgresServer.BIN.resolve("psql");

  private final Path root;
  private final int port;
  private final PostgresServer server;
  private final String mode;
  private final int poolSize;
  private final Backend backend;
  private Process process;

  /** How PgBouncer reaches PostgreSQL. */
  public enum Backend {
    /** 127.0.0.1 and the server's port. */
    TCP,
    /** The server's Unix socket ({@link PostgresServer#socketDirectory}): PostgreSQL sees no client address or port. */
    UNIX_SOCKET
  }

  private PgBouncer(Path root, int port, PostgresServer server, String mode, int poolSize, Backend backend) {
    this.root = root;
    this.port = port;
    this.server = server;
    this.mode = mode;
    this.poolSize = poolSize;
    this.backend = backend;
  }

  /** Transaction pooling with {@code poolSize} server connections per (database, user), over TCP. */
  public static PgBouncer start(PostgresServer server, int poolSize, String... users) {
    return start(server, "transaction", poolSize, users);
  }

  /** {@link #start(PostgresServer, String, Backend, int, String...)} over TCP. */
  public static PgBouncer start(PostgresServer server, String mode, int poolSize, String... users) {
    return start(server, mode, Backend.TCP, poolSize, users);
  }

  /**
   * {@code mode}: session, transaction or statement. {@code backend}: how it reaches PostgreSQL. {@code users}: the
   * roles clients may log in as (trust authentication; PgBouncer still wants each name in its auth file);
   * {@code postgres} always.
   */
  public static PgBouncer start(PostgresServer server, String mode, Backend backend, int poolSize, String... users) {
    Path binary = Files.isExecutable(Path.of("/usr/sbin/pgbouncer")) ? Path.of("/usr/sbin/pgbouncer")
        : Processes.executable("pgbouncer", INSTALL_HINT);
    Path root;
    try {
      root = Files.createTempDirectory("fencing-pgbouncer-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    PgBouncer bouncer = new PgBouncer(root, Ports.freePort(), server, mode, poolSize, backend);
    try {
      bouncer.launch(binary, users);
      return bouncer;
    } catch (RuntimeException | Error e) {
      bouncer.close();
      throw e;
    }
  }

  /**
   * JDBC URL of {@code database} through the pooler as {@code user}. {@code prepareThreshold=0}: PgBouncer 1.18 has
   * no protocol-level prepared statements, so pgjdbc must not name its server-side statements.
   */
  public String jdbcUrl(String database, String user) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=" + user + "&prepareThreshold=0";
  }

  public int port() {
    return port;
  }

  /**
   * A {@code SHOW} command of PgBouncer's admin console ({@code SHOW STATS}, {@code SHOW POOLS}, {@code SHOW
   * SERVERS}, {@code SHOW CLIENTS}...), one map per row, column name to value. Through {@code psql}: pgjdbc cannot
   * talk to the console, which fails its start-up ({@code extra_float_digits}, in the start-up packet or as a
   * {@code SET}) with "SET failed".
   */
  public List<Map<String, String>> show(String command) {
    if (!command.matches("(?i)SHOW [A-Z_]+")) {
      throw new IllegalArgumentException("not a SHOW command: " + command);
    }
    Path psql = Files.isExecutable(PSQL) ? PSQL : Processes.executable("psql", INSTALL_HINT);
    Processes.Result r = Processes.run(Duration.ofSeconds(15), Map.of(), List.of(psql.toString(), "-X", "-A",
        "-F", "\t", "-P", "footer=off", "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", "postgres", "-d",
        "pgbouncer", "-c", command));
    if (!r.ok()) {
      throw new IllegalStateException("PgBouncer's " + command + " failed (exit " + r.exitCode() + "): "
          + r.stderr().strip());
    }
    List<Map<String, String>> rows = new ArrayList<>();
    String[] lines = r.stdout().split("\n");
    String[] header = lines[0].split("\t", -1);
    for (int i = 1; i < lines.length; i++) {
      if (lines[i].isEmpty()) {
        continue;
      }
      String[] values = lines[i].split("\t", -1);
      Map<String, String> row = new java.util.LinkedHashMap<>();
      for (int c = 0; c < header.length && c < values.length; c++) {
        row.put(header[c], values[c]);
      }
      rows.add(row);
    }
    return rows;
  }

  /** The pool mode it runs in: session, transaction or statement. */
  public String mode() {
    return mode;
  }

  public int poolSize() {
    return poolSize;
  }

  public Backend backend() {
    return backend;
  }

  public String logTail(int lines) {
    return Processes.tail(root.resolve("pgbouncer.log"), lines);
  }

  private void launch(Path binary, String[] users) {
    Path ini = root.resolve("pgbouncer.ini");
    StringBuilder authFile = new StringBuilder("\"postgres\" \"\"\n");
    for (String user : users) {
      authFile.append('"').append(user).append("\" \"\"\n");
    }
    String config = "[databases]\n"
        + "* = host=" + (backend == Backend.UNIX_SOCKET ? server.socketDirectory().toString() : "127.0.0.1")
        + " port=" + server.port() + "\n"
        + "[pgbouncer]\n"
        + "listen_addr = 127.0.0.1\n"
        + "listen_port = " + port + "\n"
        + "auth_type = trust\n"
        + "auth_file = " + root.resolve("users.txt") + "\n"
        + "pool_mode = " + mode + "\n"
        + "default_pool_size = " + poolSize + "\n"
        // No spare connections beyond the pool: the pool size is the number of backends the clients share.
        + "min_pool_size = 0\n"
        + "reserve_pool_size = 0\n"
        + "admin_users = postgres\n"
        + "stats_users = postgres\n"
        + "max_client_conn = 200\n"
        + "ignore_startup_parameters = extra_float_digits,options\n"
        + "unix_socket_dir =\n"
        + "logfile = " + root.resolve("pgbouncer.log") + "\n"
        + "pidfile = " + root.resolve("pgbouncer.pid") + "\n";
    try {
      Files.writeString(ini, config);
      Files.writeString(root.resolve("users.txt"), authFile);
      if (PostgresServer.isRoot()) {
        Processes.Result chown = Processes.run(Duration.ofSeconds(30), Map.of(),
            List.of("chown", "-R", "postgres:postgres", root.toString()));
        if (!chown.ok()) {
          throw new IllegalStateException("cannot hand " + root + " to user postgres: " + chown.stderr());
        }
      }
      List<String> command = new ArrayList<>();
      if (PostgresServer.isRoot()) {
        command.addAll(List.of("runuser", "-u", "postgres", "--"));
      }
      command.addAll(List.of(binary.toString(), ini.toString()));
      process = Processes.reapOnExit(new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(root.resolve("pgbouncer.out").toFile())).start());
      process.getOutputStream().close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start pgbouncer in " + root, e);
    }
    try {
      Ports.awaitOpen(port, START_TIMEOUT);
    } catch (RuntimeException | AssertionError e) {
      throw new IllegalStateException("PgBouncer did not listen on " + port + ": "
          + Processes.tail(root.resolve("pgbouncer.out"), 20) + logTail(20), e);
    }
  }

  /** Stops PgBouncer and deletes its directory; the PostgreSQL server stays. */
  @Override
  public void close() {
    if (process != null) {
      process.destroy();
      try {
        if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
      process = null;
    }
    Processes.deleteTree(root);
  }

  @Override
  public String toString() {
    return "PgBouncer 127.0.0.1:" + port + " -> " + (backend == Backend.UNIX_SOCKET ? "Unix socket of " : "")
        + server;
  }
}
