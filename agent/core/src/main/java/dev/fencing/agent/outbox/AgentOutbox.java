package dev.fencing.agent.outbox;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigKey;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.metrics.FencingSeries;
import dev.fencing.agent.threads.AgentThreads;
import dev.fencing.outbox.OutboxRelay;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The outbox relay inside a JVM with the agent attached (fencing.outbox.*): one {@link OutboxRelay} per table, started
 * on the agent's own daemon threads once the application's JDBC driver is found ({@link ApplicationLoaders}), stopped
 * at the agent's shutdown. Every thread of the relay is an agent thread, which no hook judges: a delivery carries the
 * row's token, lock and grant and is never tagged with, nor blocked by, this JVM's lease, which may be on standby or
 * expired (a delivery is a decision the outbox's fence already accepted at the commit). Each relay's series
 * ({@link RelaySeries}) join the agent's metrics. A bad setting or a missing driver is a warning: the agent goes on
 * fencing, only the relay does not run.
 */
public final class AgentOutbox {
  private static final AgentLog LOG = AgentLog.get(AgentOutbox.class);
  /** How long the relay looks for the driver before it says so (a launcher sets its loader up within this). */
  private static final long DRIVER_WARN_MILLIS = 10_000;
  private static final long FIRST_LOOKS_MILLIS = 200;
  private static final long LATER_LOOKS_MILLIS = 5_000;

  private final RelaySettings settings;
  private final ApplicationLoaders loaders;
  private final Consumer<List<FencingSeries.Series>> expose;
  private final List<OutboxRelay> relays = new CopyOnWriteArrayList<>();
  private volatile boolean stopped;
  private Thread starter;

  private AgentOutbox(RelaySettings settings, ApplicationLoaders loaders,
      Consumer<List<FencingSeries.Series>> expose) {
    this.settings = settings;
    this.loaders = loaders;
    this.expose = expose;
  }

  /**
   * Starts the relays on a daemon thread when fencing.outbox.enabled=true and every outbox setting is valid (each
   * problem is logged as a warning otherwise); returns at once. Null when no relay runs.
   *
   * @param expose adds series to the agent's endpoint and OTLP export (each relay's, once it runs)
   */
  public static AgentOutbox start(AgentConfig config, Thread mainThread,
      Consumer<List<FencingSeries.Series>> expose) {
    RelaySettings s = new RelaySettings(config);
    for (String p : s.problems) {
      LOG.warn("outbox: " + p + "; the outbox relay does not run (the agent is not affected)");
    }
    if (!s.enabled || !s.problems.isEmpty()) {
      return null;
    }
    AgentOutbox outbox = new AgentOutbox(s, new ApplicationLoaders(mainThread), expose);
    outbox.starter = AgentThreads.newThread(outbox::run, "fencing-agent-outbox");
    outbox.starter.start();
    return outbox;
  }

  private void run() {
    ApplicationLoaders.Found found = awaitDriver();
    if (found == null) {
      return;
    }
    if (settings.kafkaBootstrap != null && !ApplicationLoaders.hasKafkaClients(found.loader())) {
      LOG.warn("outbox: " + ConfigKey.OUTBOX_KAFKA_BOOTSTRAP.property() + " is set but kafka-clients is not in the "
          + "application's class loader " + ApplicationLoaders.describe(List.of(found.loader())) + ": Kafka events "
          + "fail and are parked in the end; add kafka-clients to the application");
    }
    for (String table : settings.tables) {
      startRelay(table, found);
    }
    exposeTableGauges();
  }

  /** Each relay's table gauges, from its first read of the table on (before it, the relay knows no counts). */
  private void exposeTableGauges() {
    List<OutboxRelay> unread = new ArrayList<>(relays);
    while (!unread.isEmpty()) {
      unread.removeIf(r -> {
        if (r.metrics().pending() < 0) {
          return false;
        }
        expose(RelaySeries.table(r.metrics()));
        return true;
      });
      if (!unread.isEmpty() && !sleep(FIRST_LOOKS_MILLIS)) {
        return;
      }
    }
  }

  private void expose(List<FencingSeries.Series> series) {
    try {
      expose.accept(series);
    } catch (RuntimeException e) {
      LOG.warn("outbox: the relay's metrics cannot be exposed (" + AgentLog.describe(e) + "); the relay runs on");
    }
  }

  /** Looks for the application's driver until it is there (or the JVM stops), saying once when it is late. */
  private ApplicationLoaders.Found awaitDriver() {
    long start = System.currentTimeMillis();
    boolean warned = false;
    while (!stopped) {
      ApplicationLoaders.Found found = loaders.driverFor(settings.jdbcUrl);
      if (found != null) {
        return found;
      }
      long waited = System.currentTimeMillis() - start;
      if (!warned && waited >= DRIVER_WARN_MILLIS) {
        warned = true;
        LOG.warn("outbox: no JDBC driver accepts " + settings.jdbcUrl + " (" + ConfigKey.OUTBOX_JDBC_URL.property()
            + ") in the application's class loaders (" + ApplicationLoaders.describe(loaders.candidates())
            + "): the relay uses the application's own driver; put the driver on the application's class path. "
            + "The relay keeps looking every " + LATER_LOOKS_MILLIS / 1000 + " s");
      }
      if (!sleep(waited < DRIVER_WARN_MILLIS ? FIRST_LOOKS_MILLIS : LATER_LOOKS_MILLIS)) {
        return null;
      }
    }
    return null;
  }

  private void startRelay(String table, ApplicationLoaders.Found found) {
    OutboxRelay.Builder b = OutboxRelay.builder(() -> connect(found), table)
        .threads((task, name) -> AgentThreads.newThread(task, name))
        .log(new PrintStream(new AgentLogStream(), true, StandardCharsets.UTF_8));
    if (settings.pollInterval != null) {
      b.pollInterval(settings.pollInterval);
    }
    if (settings.maxAttempts != null) {
      b.maxAttempts(settings.maxAttempts);
    }
    if (settings.kafkaBootstrap != null) {
      b.kafkaBootstrap(settings.kafkaBootstrap).kafkaClassLoader(found.loader());
    }
    OutboxRelay relay = b.build();
    long pause = 1000;
    while (!stopped) {
      try {
        relay.start();
        relays.add(relay);
        expose(RelaySeries.deliveries(relay.metrics()));
        if (stopped) {
          relay.close();
        }
        return;
      } catch (SQLException | RuntimeException e) {
        LOG.warn("outbox: the relay of " + table + " cannot start (" + AgentLog.describe(e) + "); retrying in "
            + pause / 1000 + " s");
      }
      if (!sleep(pause)) {
        return;
      }
      pause = Math.min(30_000, pause * 2);
    }
  }

  private Connection connect(ApplicationLoaders.Found found) throws SQLException {
    Connection c = found.driver().connect(settings.jdbcUrl, settings.credentials);
    if (c == null) {
      throw new SQLException("the driver " + found.driver().getClass().getName() + " does not accept "
          + settings.jdbcUrl, "08001");
    }
    return c;
  }

  private boolean sleep(long millis) {
    try {
      Thread.sleep(millis);
      return !stopped;
    } catch (InterruptedException e) {
      return false;
    }
  }

  /** The relays running now. */
  public List<OutboxRelay> relays() {
    return List.copyOf(relays);
  }

  /**
   * Stops the relays within {@code millis}: each stops claiming and finishes the batch in hand; events whose
   * delivery is cut short are delivered by another relay once their claim expires.
   */
  public void stop(long millis) {
    stopped = true;
    if (starter != null) {
      starter.interrupt();
    }
    long deadline = System.currentTimeMillis() + millis;
    for (OutboxRelay r : relays) {
      Thread closer = AgentThreads.newThread(r::close, "fencing-agent-outbox-stop");
      closer.start();
      try {
        closer.join(Math.max(1, deadline - System.currentTimeMillis()));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** The relay's lines go to the agent's log (they carry their own level word). */
  private static final class AgentLogStream extends OutputStream {
    private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();

    @Override
    public synchronized void write(int b) {
      if (b == '\n') {
        String l = line.toString(StandardCharsets.UTF_8);
        line.reset();
        if (l.contains(" fencing-outbox WARN ")) {
          LOG.warn("outbox: " + l.substring(l.indexOf(" WARN ") + 6));
        } else {
          LOG.info("outbox: " + l.substring(l.contains(" INFO ") ? l.indexOf(" INFO ") + 6 : 0));
        }
      } else {
        line.write(b);
      }
    }
  }
}
