package dev.fencing.outbox;

import dev.fencing.protocol.OutboxSchema;
import java.io.PrintStream;
import java.net.InetAddress;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Delivers the committed events of one outbox table: at least once, with an exactly-once effect at a receiver that
 * dedupes by the event id. Each cycle claims a batch in a short transaction (committed pending events that are due,
 * whose claim is free or expired, and that are first of their ordering key; {@code FOR UPDATE SKIP LOCKED}, so that
 * relays never claim one event together), then delivers the batch outside any transaction with the row's own
 * fencing values, and marks each event delivered (while it still holds the claim) or failed: retried after an
 * exponential backoff, parked when the attempts run out or the destination can never take it. Any number of relays
 * may run on one table. See docs/reference/outbox-relay.md.
 */
public final class OutboxRelay implements AutoCloseable {

  /**
   * Makes the relay's threads (its loop, its deliveries, the LISTEN thread, the HTTP client's): daemon threads, not
   * started. A host that judges threads by their class (the agent, which never fences its own threads) gives its own.
   */
  @FunctionalInterface
  public interface Threads {
    Thread thread(Runnable task, String name);

    /** Plain daemon threads. */
    Threads DAEMON = (task, name) -> {
      Thread t = new Thread(task, name);
      t.setDaemon(true);
      return t;
    };
  }

  /** Opens a connection to the outbox table's database; the relay holds one, and one more to LISTEN. */
  @FunctionalInterface
  public interface ConnectionSource {
    Connection open() throws SQLException;
  }

  private final Settings settings;
  private final RelayMetrics metrics;
  private final RelayLog log;
  private final Object wakeLock = new Object();
  /** Guards the Kafka producer, made at the first Kafka event (not the relay's monitor, which close() holds). */
  private final Object kafkaLock = new Object();
  private boolean woken;
  private volatile boolean running;
  private Thread loop;
  private ExecutorService workers;
  private Connection connection;
  private OutboxDialect dialect;
  private PostgresListener listener;
  /** Set when LISTEN got no notification (a pooler in transaction mode): the relay polls as without LISTEN. */
  private volatile boolean listenUnheard;
  private HttpDelivery http;
  private KafkaDelivery kafka;
  private volatile String kafkaProblem;
  private long statsReadAt;
  private long nextRetryAt = Long.MAX_VALUE;
  /** Whether the last claim found a full batch: then the next one stops after a batch, else it reads all due events. */
  private boolean lastClaimFull = true;

  private OutboxRelay(Settings settings) {
    this.settings = settings;
    this.metrics = new RelayMetrics(settings.table);
    this.log = new RelayLog(settings.log);
  }

  /** A relay of {@code table} ({@code [schema.]name}) on the database {@code connections} opens. */
  public static Builder builder(ConnectionSource connections, String table) {
    return new Builder(connections, table);
  }

  public RelayMetrics metrics() {
    return metrics;
  }

  public String relayId() {
    return settings.relayId;
  }

  /** Whether the PostgreSQL LISTEN connection is in place (false on other databases or while it reconnects). */
  public boolean listening() {
    PostgresListener l = listener;
    return l != null && l.listening();
  }

  /**
   * Connects (failing here if the database cannot be reached or is not one the relay knows), starts the LISTEN
   * thread on PostgreSQL and the relay's loop.
   */
  public synchronized OutboxRelay start() throws SQLException {
    if (running) {
      throw new IllegalStateException("already started");
    }
    connection = settings.connections.open();
    dialect = OutboxDialect.of(connection);
    prepare(connection);
    checkRights();
    http = new HttpDelivery(settings.requestTimeout, settings.threads);
    AtomicInteger n = new AtomicInteger();
    workers = Executors.newFixedThreadPool(settings.concurrency,
        r -> settings.threads.thread(r, "fencing-outbox-deliver-" + n.incrementAndGet()));
    running = true;
    if (dialect == OutboxDialect.POSTGRESQL && settings.listen) {
      listener = new PostgresListener(settings.connections, settings.channel, this::wake, this::listenUnheard, log,
          settings.threads);
      listener.start();
    }
    loop = settings.threads.thread(this::run, "fencing-outbox-relay");
    loop.start();
    log.info("relay " + settings.relayId + " started on " + settings.table + " ("
        + dialect.name().toLowerCase(Locale.ROOT) + (listener != null ? ", LISTEN " + settings.channel : "")
        + ", poll every " + pollInterval().toMillis() + " ms)");
    return this;
  }

  /**
   * On PostgreSQL, the relay does not start without a right it needs (SELECT on the table, UPDATE of each delivery
   * column): a missing one would show only at the first event that needs it, a failed attempt, say.
   */
  private void checkRights() throws SQLException {
    if (dialect != OutboxDialect.POSTGRESQL) {
      return;
    }
    List<String> missing = new ArrayList<>();
    String user;
    try (PreparedStatement ps = connection.prepareStatement(dialect.sql("missing_rights", settings.table))) {
      ps.setString(1, settings.table);
      ps.setString(2, settings.table);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          missing.add(rs.getString(1));
        }
      }
      user = connection.getMetaData().getUserName();
    } catch (SQLException e) {
      closeConnection();
      throw e;
    }
    if (!missing.isEmpty()) {
      closeConnection();
      throw new SQLException("the relay's database user " + user + " lacks " + String.join(", ", missing) + " on "
          + settings.table + "; it needs: GRANT SELECT, UPDATE (" + String.join(", ", OutboxSchema.STATE,
          OutboxSchema.ATTEMPTS, OutboxSchema.NEXT_ATTEMPT_AT, OutboxSchema.DELIVERED_AT, OutboxSchema.LAST_ERROR,
          OutboxSchema.CLAIMED_BY, OutboxSchema.CLAIMED_UNTIL) + ") ON " + settings.table + " TO " + user, "42501");
    }
  }

  private Duration pollInterval() {
    if (settings.pollInterval != null) {
      return settings.pollInterval;
    }
    return dialect == OutboxDialect.POSTGRESQL && settings.listen && !listenUnheard ? Duration.ofSeconds(30)
        : Duration.ofSeconds(1);
  }

  private void listenUnheard() {
    listenUnheard = true;
    log.warn("LISTEN on " + settings.channel + " gets no notification (behind a pooler in transaction mode, such as "
        + "PgBouncer, a LISTEN stays on a server connection other clients borrow): polling every "
        + pollInterval().toMillis() + " ms instead. For wake-ups at commit, connect the relay to PostgreSQL directly "
        + "or through session pooling; to poll without trying LISTEN, --no-listen");
    wake();
  }

  /** Wakes the loop now (a notification, or a caller who just committed events). */
  public void wake() {
    synchronized (wakeLock) {
      woken = true;
      wakeLock.notifyAll();
    }
  }

  private void run() {
    long pause = 500;
    while (running) {
      long wait = pollInterval().toMillis();
      try {
        if (connection == null) {
          connection = settings.connections.open();
          prepare(connection);
          log.info("reconnected to the database");
        }
        int claimed = cycle();
        readStats(claimed > 0);
        pause = 500;
        if (claimed > 0) {
          // Each claimed event was delivered, rescheduled or parked: claim again at once, for the rest of a full
          // batch and for the next event of each key just delivered (no notification announces those).
          continue;
        }
      } catch (SQLException | RuntimeException e) {
        log.warn("relay cycle failed, retrying in " + pause + " ms: " + HttpDelivery.describe(e));
        closeConnection();
        wait = pause;
        pause = Math.min(30_000, pause * 2);
      } catch (InterruptedException e) {
        break;
      }
      long now = System.currentTimeMillis();
      wait = Math.min(wait, Math.max(1, nextRetryAt - now));
      wait = Math.min(wait, Math.max(1, statsReadAt + settings.statsInterval.toMillis() - now));
      awaitWake(wait);
    }
  }

  private void prepare(Connection c) throws SQLException {
    c.setAutoCommit(true);
    if (dialect == OutboxDialect.POSTGRESQL) {
      unnamedStatements(c);
    }
    if (dialect == OutboxDialect.MARIADB) {
      // A locking read takes no gap locks, and the claim's look at each previous event (a plain read) sees what
      // other relays committed.
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    }
  }

  /**
   * pgjdbc names a statement on the server after its fifth run, and runs it by that name afterwards: behind a pooler
   * in transaction mode the next transaction may be on a server connection that never saw it ("prepared statement
   * S_1 does not exist"). The relay's statements stay unnamed (pgjdbc's prepareThreshold 0), whatever the URL says.
   */
  private static void unnamedStatements(Connection c) {
    try {
      Class<?> pg = Class.forName("org.postgresql.PGConnection", false, c.getClass().getClassLoader());
      pg.getMethod("setPrepareThreshold", int.class).invoke(c.unwrap(pg), 0);
    } catch (ReflectiveOperationException | LinkageError | SQLException e) {
      // another driver: its statements are its own business
    }
  }

  private void awaitWake(long millis) {
    synchronized (wakeLock) {
      long end = System.currentTimeMillis() + millis;
      while (!woken && running) {
        long left = end - System.currentTimeMillis();
        if (left <= 0) {
          break;
        }
        try {
          wakeLock.wait(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      woken = false;
    }
  }

  /** One claim, delivery and marking of a batch; the number of events claimed. */
  private int cycle() throws SQLException, InterruptedException {
    if (System.currentTimeMillis() >= nextRetryAt) {
      nextRetryAt = Long.MAX_VALUE;
    }
    List<OutboxEvent> batch = claim();
    if (batch.isEmpty()) {
      return 0;
    }
    CompletionService<Map.Entry<OutboxEvent, DeliveryResult>> done = new ExecutorCompletionService<>(workers);
    for (OutboxEvent e : batch) {
      done.submit(() -> Map.entry(e, deliver(e)));
    }
    SQLException failure = null;
    List<OutboxEvent> delivered = new ArrayList<>();
    int left = batch.size();
    while (left > 0) {
      // The attempts that have ended by now: the delivered ones are marked together, in one statement.
      Future<Map.Entry<OutboxEvent, DeliveryResult>> f = done.take();
      delivered.clear();
      do {
        left--;
        Map.Entry<OutboxEvent, DeliveryResult> r;
        try {
          r = f.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException("delivery failed unexpectedly", e.getCause());
        }
        if (r.getValue().kind() == DeliveryResult.Kind.DELIVERED) {
          delivered.add(r.getKey());
          continue;
        }
        try {
          markFailed(r.getKey(), r.getValue());
        } catch (SQLException e) {
          // The claim expires and another relay (or this one) delivers again; the receiver dedupes.
          failure = failure == null ? e : failure;
        }
      } while (left > 0 && (f = done.poll()) != null);
      try {
        markDelivered(delivered);
      } catch (SQLException e) {
        failure = failure == null ? e : failure;
      }
    }
    if (failure != null) {
      throw failure;
    }
    return batch.size();
  }

  private List<OutboxEvent> claim() throws SQLException {
    Connection c = connection;
    String t = settings.table;
    List<OutboxEvent> claimed = new ArrayList<>();
    c.setAutoCommit(false);
    try {
      try (PreparedStatement ps = c.prepareStatement(dialect.sql(lastClaimFull ? "candidates" : "candidates-all",
          t))) {
        ps.setInt(1, settings.batchSize);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            claimed.add(OutboxEvent.read(rs));
          }
        }
      }
      lastClaimFull = claimed.size() >= settings.batchSize;
      if (!claimed.isEmpty()) {
        try (PreparedStatement ps = c.prepareStatement(dialect.sql("claim", t, claimed.size()))) {
          ps.setString(1, settings.relayId);
          ps.setLong(2, settings.claimTimeout.toMillis());
          for (int i = 0; i < claimed.size(); i++) {
            ps.setString(i + 3, claimed.get(i).eventId());
          }
          ps.executeUpdate();
        }
      }
      c.commit();
    } catch (SQLException | RuntimeException e) {
      rollbackQuietly(c);
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
    return claimed;
  }

  private DeliveryResult deliver(OutboxEvent e) throws InterruptedException {
    if (OutboxSchema.CHANNEL_HTTP.equals(e.channel())) {
      return http.deliver(e);
    }
    if (OutboxSchema.CHANNEL_KAFKA.equals(e.channel())) {
      KafkaDelivery k = kafka();
      return k == null ? DeliveryResult.failed(kafkaProblem) : k.deliver(e);
    }
    return DeliveryResult.invalid("unknown channel '" + e.channel() + "' (expected " + OutboxSchema.CHANNEL_HTTP
        + " or " + OutboxSchema.CHANNEL_KAFKA + ")");
  }

  private KafkaDelivery kafka() {
    synchronized (kafkaLock) {
      return kafkaLocked();
    }
  }

  private KafkaDelivery kafkaLocked() {
    if (kafka == null) {
      if (settings.kafkaBootstrap == null) {
        kafkaProblem = "this relay has no Kafka bootstrap servers (the command: --kafka-bootstrap)";
        return null;
      }
      try {
        kafka = new KafkaDelivery(settings.kafkaClassLoader, settings.kafkaBootstrap, settings.kafkaProperties,
            settings.requestTimeout);
      } catch (RuntimeException e) {
        kafkaProblem = e.getMessage();
        return null;
      }
    }
    return kafka;
  }

  /**
   * Marks delivered events in one statement, each only while this relay still holds its claim. When some claim was
   * taken over meanwhile, the statement is rolled back and each event marked on its own, which tells which one it was.
   */
  private void markDelivered(List<OutboxEvent> events) throws SQLException {
    Connection c = connection;
    if (events.size() <= 1) {
      for (OutboxEvent e : events) {
        record(e, markDelivered(c, events) == 1);
      }
      return;
    }
    int updated;
    c.setAutoCommit(false);
    try {
      updated = markDelivered(c, events);
      if (updated == events.size()) {
        c.commit();
      } else {
        c.rollback();
      }
    } catch (SQLException | RuntimeException e) {
      rollbackQuietly(c);
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
    for (OutboxEvent e : events) {
      record(e, updated == events.size() || markDelivered(c, List.of(e)) == 1);
    }
  }

  /** Rolls back after a failed statement; a failing rollback is left to the loop, which reopens the connection. */
  private static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException ignored) {
      // the connection is closed and reopened by the loop
    }
  }

  private int markDelivered(Connection c, List<OutboxEvent> events) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(dialect.sql("delivered", settings.table, events.size()))) {
      ps.setString(1, settings.relayId);
      for (int i = 0; i < events.size(); i++) {
        ps.setString(i + 2, events.get(i).eventId());
      }
      return ps.executeUpdate();
    }
  }

  private void record(OutboxEvent e, boolean delivered) {
    if (!delivered) {
      claimLost(e);
      return;
    }
    metrics.delivery(e.channel(), RelayMetrics.Outcome.DELIVERED);
  }

  private void claimLost(OutboxEvent e) {
    log.warn("event " + e.eventId() + ": the claim expired before the attempt ended and another relay holds it");
    metrics.delivery(e.channel(), RelayMetrics.Outcome.CLAIM_LOST);
  }

  private void markFailed(OutboxEvent e, DeliveryResult r) throws SQLException {
    String t = settings.table;
    int attempts = e.attempts() + 1;
    boolean park = r.kind() != DeliveryResult.Kind.FAILED || attempts >= settings.maxAttempts;
    long backoff = park ? 0 : backoff(attempts);
    String error = cut(r.error() + (park && r.kind() == DeliveryResult.Kind.FAILED
        ? " (parked after " + attempts + " attempts)" : ""));
    int updated;
    try (PreparedStatement ps = connection.prepareStatement(dialect.sql("failed", t))) {
      ps.setString(1, park ? OutboxSchema.PARKED : OutboxSchema.PENDING);
      ps.setInt(2, attempts);
      ps.setString(3, error);
      ps.setLong(4, backoff);
      ps.setString(5, e.eventId());
      ps.setString(6, settings.relayId);
      updated = ps.executeUpdate();
    }
    if (updated == 0) {
      claimLost(e);
      return;
    }
    log.warn("event " + e.eventId() + " to " + e.target() + ": " + error
        + (park ? "; parked" : "; attempt " + attempts + ", next in " + backoff + " ms"));
    if (!park) {
      nextRetryAt = Math.min(nextRetryAt, System.currentTimeMillis() + backoff);
    }
    metrics.delivery(e.channel(), !park ? RelayMetrics.Outcome.FAILED
        : r.kind() == DeliveryResult.Kind.REJECTED ? RelayMetrics.Outcome.REJECTED : RelayMetrics.Outcome.PARKED);
  }

  /** The pause after the n-th failed attempt: the base, doubled per further attempt, at most the cap. */
  long backoff(int attempts) {
    long base = settings.backoff.toMillis();
    long cap = settings.backoffCap.toMillis();
    int doublings = Math.min(attempts - 1, 40);
    long d = base << doublings;
    return d <= 0 || d > cap || (d >> doublings) != base ? cap : d;
  }

  private static String cut(String error) {
    return error.length() <= 1024 ? error : error.substring(0, 1021) + "...";
  }

  private void readStats(boolean worked) throws SQLException {
    long now = System.currentTimeMillis();
    if (now - statsReadAt < (worked ? 1000 : settings.statsInterval.toMillis())) {
      return;
    }
    statsReadAt = now;
    long pending;
    double age;
    long parked;
    try (PreparedStatement ps = connection.prepareStatement(dialect.sql("pending", settings.table));
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      pending = rs.getLong(1);
      age = rs.getDouble(2);
    }
    try (PreparedStatement ps = connection.prepareStatement(dialect.sql("parked", settings.table));
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      parked = rs.getLong(1);
    }
    metrics.table(pending, Math.max(0, age), parked);
  }

  private void closeConnection() {
    Connection c = connection;
    connection = null;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        // reopened by the loop
      }
    }
  }

  /**
   * Stops claiming, lets the batch in hand finish (each attempt ends within the request timeout) and be marked, then
   * closes the connections and the Kafka producer. Events still claimed by a relay that is killed instead are
   * delivered by another relay once the claim expires.
   */
  @Override
  public synchronized void close() {
    if (!running) {
      return;
    }
    running = false;
    wake();
    if (listener != null) {
      listener.close();
    }
    try {
      loop.join(settings.requestTimeout.toMillis() + 5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (loop.isAlive()) {
      loop.interrupt();
    }
    workers.shutdownNow();
    http.close();
    synchronized (kafkaLock) {
      if (kafka != null) {
        kafka.close();
      }
    }
    closeConnection();
    log.info("relay " + settings.relayId + " stopped");
  }

  /** The relay's settings; every duration positive. */
  public static final class Builder {
    private final Settings s = new Settings();

    private Builder(ConnectionSource connections, String table) {
      s.connections = Objects.requireNonNull(connections, "connections");
      s.table = Outbox.checkTable(table);
      // The table's trigger notifies on the table's name as PostgreSQL stores it: unqualified, folded to lower case.
      s.channel = s.table.substring(s.table.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT);
    }

    /** This relay's name in {@code claimed_by} (default: pid@host plus a random suffix). */
    public Builder relayId(String relayId) {
      if (relayId == null || relayId.isBlank() || relayId.length() > 100) {
        throw new IllegalArgumentException("relay id: 1 to 100 characters expected, got '" + relayId + "'");
      }
      s.relayId = relayId;
      return this;
    }

    /** How often the relay looks for due events without a wake-up (default 1 s; 30 s on PostgreSQL with LISTEN). */
    public Builder pollInterval(Duration d) {
      s.pollInterval = positive("poll interval", d);
      return this;
    }

    /** Whether to LISTEN on PostgreSQL (default true). */
    public Builder listen(boolean listen) {
      s.listen = listen;
      return this;
    }

    /** The PostgreSQL notification channel (default: the table's name without its schema, in lower case). */
    public Builder channel(String channel) {
      s.channel = Objects.requireNonNull(channel, "channel");
      return this;
    }

    /** Events claimed per cycle (default 100). */
    public Builder batchSize(int n) {
      s.batchSize = atLeast("batch size", n, 1);
      return this;
    }

    /** Deliveries in flight at once (default 4). */
    public Builder concurrency(int n) {
      s.concurrency = atLeast("concurrency", n, 1);
      return this;
    }

    /** Failed attempts after which an event is parked (default 10). */
    public Builder maxAttempts(int n) {
      s.maxAttempts = atLeast("max attempts", n, 1);
      return this;
    }

    /** The pause after the first failed attempt, doubled per further one (default 1 s). */
    public Builder backoff(Duration d) {
      s.backoff = positive("backoff", d);
      return this;
    }

    /** The longest pause between attempts (default 5 min). */
    public Builder backoffCap(Duration d) {
      s.backoffCap = positive("backoff cap", d);
      return this;
    }

    /** How long a claim holds; after it another relay may deliver the event (default 60 s). */
    public Builder claimTimeout(Duration d) {
      s.claimTimeout = positive("claim timeout", d);
      return this;
    }

    /** The longest an HTTP request or a Kafka acknowledgement may take (default 30 s; below the claim timeout). */
    public Builder requestTimeout(Duration d) {
      s.requestTimeout = positive("request timeout", d);
      return this;
    }

    /** How often the table's pending and parked counts are read for the metrics (default 15 s). */
    public Builder statsInterval(Duration d) {
      s.statsInterval = positive("stats interval", d);
      return this;
    }

    /** Kafka's {@code bootstrap.servers}; without it Kafka events fail (and are parked in the end). */
    public Builder kafkaBootstrap(String servers) {
      s.kafkaBootstrap = servers;
      return this;
    }

    /** Extra producer settings (security, client id); the relay's acks, idempotence and timeouts win. */
    public Builder kafkaProperty(String key, String value) {
      s.kafkaProperties.put(key, value);
      return this;
    }

    /** Where kafka-clients is found (default: this class's loader). */
    public Builder kafkaClassLoader(ClassLoader loader) {
      s.kafkaClassLoader = Objects.requireNonNull(loader, "loader");
      return this;
    }

    /** Makes the relay's threads (default: plain daemon threads). */
    public Builder threads(Threads threads) {
      s.threads = Objects.requireNonNull(threads, "threads");
      return this;
    }

    /** Where the relay's log lines go (default standard error). */
    public Builder log(PrintStream out) {
      s.log = Objects.requireNonNull(out, "log");
      return this;
    }

    public OutboxRelay build() {
      if (s.requestTimeout.compareTo(s.claimTimeout) >= 0) {
        throw new IllegalArgumentException("request timeout " + s.requestTimeout.toMillis()
            + " ms must be below the claim timeout " + s.claimTimeout.toMillis() + " ms, or a claim could expire "
            + "while its delivery is still under way");
      }
      if (s.backoffCap.compareTo(s.backoff) < 0) {
        throw new IllegalArgumentException("backoff cap " + s.backoffCap.toMillis() + " ms is below the backoff "
            + s.backoff.toMillis() + " ms");
      }
      return new OutboxRelay(s);
    }

    private static Duration positive(String what, Duration d) {
      if (d == null || d.isZero() || d.isNegative()) {
        throw new IllegalArgumentException(what + ": a positive duration expected, got " + d);
      }
      return d;
    }

    private static int atLeast(String what, int n, int min) {
      if (n < min) {
        throw new IllegalArgumentException(what + ": at least " + min + " expected, got " + n);
      }
      return n;
    }
  }

  private static final class Settings {
    ConnectionSource connections;
    String table;
    String channel;
    String relayId = defaultRelayId();
    Duration pollInterval;
    boolean listen = true;
    int batchSize = 100;
    int concurrency = 4;
    int maxAttempts = 10;
    Duration backoff = Duration.ofSeconds(1);
    Duration backoffCap = Duration.ofMinutes(5);
    Duration claimTimeout = Duration.ofSeconds(60);
    Duration requestTimeout = Duration.ofSeconds(30);
    Duration statsInterval = Duration.ofSeconds(15);
    String kafkaBootstrap;
    Map<String, String> kafkaProperties = new LinkedHashMap<>();
    ClassLoader kafkaClassLoader = OutboxRelay.class.getClassLoader();
    PrintStream log = System.err;
    Threads threads = Threads.DAEMON;
  }

  private static String defaultRelayId() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException | SecurityException e) {
      host = "localhost";
    }
    String id = ProcessHandle.current().pid() + "@" + host;
    return (id.length() > 80 ? id.substring(0, 80) : id) + "/" + UUID.randomUUID().toString().substring(0, 8);
  }
}
