package dev.fencing.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The worker the fault harness runs under the agent: an ordinary loop with no fencing code. Each iteration makes one
 * uniquely identified write ({@code <name>:<seq>}) through every channel, each attempted on its own:
 * <ol>
 *   <li>{@code pg}: one PostgreSQL transaction: UPDATE of a shared counter, a short sleep (so that a freeze often
 *       lands while the transaction is open), INSERT of the write's row;</li>
 *   <li>{@code mariadb}: an autocommit INSERT into MariaDB;</li>
 *   <li>{@code http}: a POST to the harness's fenced HTTP server (JDK HttpClient);</li>
 *   <li>{@code kafka}: a record on the harness's topic, keyed by the write id (acks=all);</li>
 *   <li>the unfenced destinations, reached straight (not through the worker's data-path proxies): {@code pg-unfenced}
 *       (an autocommit INSERT into a table without a fence, on a connection of its own), {@code http-unfenced} (a
 *       POST to the unfenced receiver), {@code kafka-unfenced} (a record on the unfenced topic, from a producer of its
 *       own).</li>
 * </ol>
 * Before each attempt it prints {@code ATTEMPT <epoch ms> <write id> <channel> <state> <token>} with what its agent's
 * {@code /status} said at the start of the iteration (a GET: never blocked, and the token the write carries is the
 * one the resource records), after it {@code OUTCOME <epoch ms> <write id> <channel> <result>}, the raw facts only:
 * {@code OK}, {@code SQLSTATE <code> <message>}, {@code HTTP <status>} or {@code EXC <exception classes> <message>}.
 * The harness classifies them ({@link WorkerLog}). A {@code stop} line on stdin ends the loop after the current
 * iteration; the worker prints {@code IDLE} and waits to be shut down.
 *
 * <p>With several locks ({@code locks=faults-1,faults-2}: the agent declares one section of {@link FaultSections} per
 * lock) each iteration makes one write per lock, {@code <name>:<seq>/<lock>}, each inside its lock's section and
 * into that lock's tables ({@code pg_total_<i>}, {@code pg_write_<i>}, {@code maria_write_<i>}); its ATTEMPT line
 * ends with the lock, and the state and token are that lock's entry of {@code /status}.
 *
 * <p>How the writes meet the lock ({@code work=}, {@link Topology.Work}): {@code jvm}, as above, under the agent's
 * JVM-wide lock; {@code section}, each write inside the declared section {@link FaultSections#lock1}, where the
 * {@code pg} and {@code pg-unfenced} transactions are opened and written, and committed by the caller after the
 * section returned (as Spring's {@code @Transactional} proxy does; {@value #AFTER_SECTION_MS} ms after it for
 * {@code pg-unfenced}), and the {@code kafka} send's callback writes the
 * record's id ({@code <id>.cb}) to the unfenced table; {@code curator}, {@code jetcd} and {@code leader}, the
 * worker's own lock, which the agent captures: it writes only while it holds an {@code InterProcessMutex}, a jetcd
 * {@code Lock} on a lease it keeps alive, or a {@code LeaderSelector}'s leadership (whose {@code takeLeadership}
 * starts a scheduler that makes the writes, the pattern of Spring Integration's {@code LeaderInitiator}); the
 * {@code kafka} send's callback writes to the unfenced table there too. Such a worker gives its lock up when its
 * client reports the session or lease lost, or after {@value #GIVE_UP} iterations in a row with a failed write, and
 * takes it again; when it has it, it prints the token {@code /status} shows for it as the agent prints its own
 * grants ({@code holding lock 'faults' with fencing token N}). {@code outbox}: as {@code jvm}, and the {@code pg}
 * transaction also inserts two events into the tokened outbox table {@value #OUTBOX_TABLE} (plain SQL, no token
 * written by the worker): {@code <id>/http}, a POST of the write id to the unfenced receiver ({@code outbox-http}),
 * and {@code <id>/kafka}, a record on the unfenced topic ({@code outbox-topic}), both keyed by the worker's name;
 * with {@code outbox-db=mariadb} the {@code mariadb} write inserts them instead, in one transaction with its row.
 *
 * <p>Arguments, {@code key=value}: name, pg, mariadb, http, kafka, topic, status, pg-direct, http-unfenced,
 * kafka-direct, unfenced-topic, interval-ms (default 100), locks (none: the one JVM-wide lock), work (default jvm),
 * coordinator and ttl-ms (the worker's own lock: ZooKeeper connect string or etcd endpoints, session timeout or
 * lease TTL), outbox-http and outbox-topic (work=outbox: the events' destinations), outbox-db (postgresql, the
 * default, or mariadb).
 */
public final class FaultWorker {
  private static final Pattern STATE = Pattern.compile("\"state\":\"([A-Z_]+)\"");
  private static final Pattern TOKEN = Pattern.compile("\"token\":(\\d+)");
  /**
   * The wall clock when the worker started (libfaketime's offset is 0 then) and the monotonic clock at that moment:
   * the times the worker prints are the real time even while the clock-jump fault skews its wall clock, so that the
   * checker's real-time rule compares every process on one clock.
   */
  private static final long EPOCH_MS = System.currentTimeMillis();
  private static final long EPOCH_NANOS = System.nanoTime();

  private final String name;
  private final String pgUrl;
  private final String mariaUrl;
  private final URI httpUri;
  private final URI statusUri;
  private final String topic;
  private final KafkaProducer<String, String> producer;
  /** The section locks, empty with the one JVM-wide lock. */
  private final java.util.List<String> locks;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final String pgDirectUrl;
  private final URI unfencedHttpUri;
  private final String unfencedTopic;
  private final KafkaProducer<String, String> unfencedProducer;
  private final java.util.concurrent.atomic.AtomicLong seq = new java.util.concurrent.atomic.AtomicLong();
  /** {@code work=outbox}: where the events of each pg transaction go (null in the other modes). */
  private final String outboxHttp;
  private final String outboxTopic;
  /** {@code work=outbox}: the events go with the {@code mariadb} write instead of the {@code pg} transaction. */
  private final boolean mariaOutbox;
  /** The tokened outbox table ({@code sql install --outbox}) the {@code outbox} mode writes events into. */
  static final String OUTBOX_TABLE = "outbox";
  /**
   * {@code work=section}: how long the caller works between the section's return and its commit of the unfenced
   * transaction, so that a freeze often lands there (the commit is then decided after the freeze).
   */
  static final long AFTER_SECTION_MS = 30;
  /** Iterations in a row with a failed write after which a worker holding its own lock gives it up. */
  static final int GIVE_UP = 20;
  private Connection pgCallback;
  private Connection pg;
  private Connection maria;
  private Connection pgUnfenced;

  private FaultWorker(Map<String, String> args) {
    this.name = required(args, "name");
    this.pgUrl = required(args, "pg");
    this.mariaUrl = required(args, "mariadb");
    this.httpUri = URI.create(required(args, "http"));
    this.statusUri = URI.create(required(args, "status"));
    this.topic = required(args, "topic");
    String locks = args.getOrDefault("locks", "");
    this.locks = locks.isEmpty() ? java.util.List.of() : java.util.List.of(locks.split(","));
    this.producer = producer(required(args, "kafka"));
    this.pgDirectUrl = required(args, "pg-direct");
    this.unfencedHttpUri = URI.create(required(args, "http-unfenced"));
    this.unfencedTopic = required(args, "unfenced-topic");
    this.unfencedProducer = producer(required(args, "kafka-direct"));
    this.outboxHttp = args.get("outbox-http");
    this.outboxTopic = args.get("outbox-topic");
    this.mariaOutbox = "mariadb".equals(args.get("outbox-db"));
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    p.put("acks", "all");
    p.put("linger.ms", "0");
    p.put("max.block.ms", "5000");
    p.put("request.timeout.ms", "5000");
    p.put("delivery.timeout.ms", "10000");
    return new KafkaProducer<>(p);
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = new HashMap<>();
    for (String arg : argv) {
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("expected key=value, got '" + arg + "'");
      }
      args.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    FaultWorker worker = new FaultWorker(args);
    long interval = Long.parseLong(args.getOrDefault("interval-ms", "100"));
    AtomicBoolean running = new AtomicBoolean(true);
    Thread stdin = new Thread(() -> awaitStop(running), "fault-worker-stdin");
    stdin.setDaemon(true);
    stdin.start();
    print("WORKER STARTED " + worker.name);
    switch (args.getOrDefault("work", "jvm")) {
      case "jvm", "outbox" -> {
        while (running.get()) {
          worker.iteration(worker.nextId());
          Thread.sleep(interval);
        }
      }
      case "section" -> {
        while (running.get()) {
          worker.sectionIteration(worker.nextId());
          Thread.sleep(interval);
        }
      }
      case "curator" -> worker.curatorLoop(args, running, interval);
      case "jetcd" -> worker.jetcdLoop(args, running, interval);
      case "leader" -> worker.leaderLoop(args, running, interval);
      default -> throw new IllegalArgumentException("work must be jvm, section, curator, jetcd, leader or outbox, not '"
          + args.get("work") + "'");
    }
    worker.producer.close(Duration.ofSeconds(1));
    worker.unfencedProducer.close(Duration.ofSeconds(1));
    print("IDLE " + worker.name);
    Thread.currentThread().join(); // drained: waits to be scraped and shut down
  }

  private String nextId() {
    return name + ":" + seq.incrementAndGet();
  }

  /** {@code work=section}: every write inside section 1, the transactions committed after it returned. */
  private void sectionIteration(String id) {
    String status = lockStatus(statusBody(), History.LOCK);
    attempt(id, "pg", status, () -> commitAfterSection(pg(), c -> pgStatements(c, id, "pg_total", "pg_write"), 0));
    attempt(id, "mariadb", status, () -> FaultSections.run(1, () -> mariaWrite(id, "maria_write")));
    attempt(id, "http", status, () -> FaultSections.run(1, () -> httpWrite(id)));
    attempt(id, "kafka", status, () -> FaultSections.run(1, () -> kafkaWriteWithCallback(id, status)));
    attempt(id, "pg-unfenced", status, () -> commitAfterSection(pgUnfenced(), c -> insertUnfenced(c, id),
        AFTER_SECTION_MS));
    attempt(id, "http-unfenced", status, () -> FaultSections.run(1, () -> httpUnfencedWrite(id)));
    attempt(id, "kafka-unfenced", status, () -> FaultSections.run(1, () -> kafkaUnfencedWrite(id)));
  }

  private interface Statements {
    void run(Connection c) throws SQLException;
  }

  /**
   * The section opens the transaction and writes; the caller commits once the section returned (a
   * {@code @Transactional} proxy around a section method).
   */
  private static String commitAfterSection(Connection c, Statements statements, long callerWorkMs)
      throws Exception {
    try {
      FaultSections.run(1, () -> {
        c.setAutoCommit(false);
        statements.run(c);
        return "OK";
      });
      Thread.sleep(callerWorkMs);
      c.commit();
      return "OK";
    } catch (SQLException e) {
      reset(c, e);
      throw e;
    } catch (Exception e) {
      reset(c, new SQLException(e.toString()));
      throw e;
    }
  }

  /**
   * One iteration under the worker's own lock (captured by the agent): the writes of {@code work=jvm}, the Kafka
   * send with a callback that writes. Whether every write succeeded.
   */
  private boolean capturedIteration(String id) {
    String status = entryStatus(statusBody(), "captured", History.LOCK);
    boolean ok = attempt(id, "pg", status, () -> pgWrite(id, "pg_total", "pg_write"));
    ok &= attempt(id, "mariadb", status, () -> mariaWrite(id, "maria_write"));
    ok &= attempt(id, "http", status, () -> httpWrite(id));
    ok &= attempt(id, "kafka", status, () -> kafkaWriteWithCallback(id, status));
    ok &= attempt(id, "pg-unfenced", status, () -> pgUnfencedWrite(id));
    ok &= attempt(id, "http-unfenced", status, () -> httpUnfencedWrite(id));
    ok &= attempt(id, "kafka-unfenced", status, () -> kafkaUnfencedWrite(id));
    return ok;
  }

  /**
   * Prints the token the agent shows for the worker's own lock once it has it, in the agent's words for its own
   * grants (the checker reads a writer's grants from those lines).
   */
  private void announceGrant(long previous) throws InterruptedException {
    for (int i = 0; i < 40; i++) {
      String[] st = entryStatus(statusBody(), "captured", History.LOCK).split(" ");
      long token = Long.parseLong(st[1]);
      // Whatever the agent's trust in it (a lease granted while etcd was slow to answer is EXPIRED at once), the token
      // is the worker's own grant: its writes carry it.
      if (!st[0].equals("UNKNOWN") && token > 0 && token != previous) {
        print("LOCKED " + now() + " holding lock '" + History.LOCK + "' with fencing token " + token
            + " (the worker's own lock, as /status captured[] shows it)");
        return;
      }
      Thread.sleep(25);
    }
    print("LOCKED " + now() + " but /status shows no new captured token for '" + History.LOCK + "'");
  }

  private long capturedToken() {
    return Long.parseLong(entryStatus(statusBody(), "captured", History.LOCK).split(" ")[1]);
  }

  private static org.apache.curator.framework.CuratorFramework curator(Map<String, String> args,
      AtomicBoolean lost) {
    org.apache.curator.framework.CuratorFramework client = org.apache.curator.framework.CuratorFrameworkFactory
        .builder().connectString(required(args, "coordinator"))
        .sessionTimeoutMs(Integer.parseInt(required(args, "ttl-ms"))).connectionTimeoutMs(2_000)
        .retryPolicy(new org.apache.curator.retry.ExponentialBackoffRetry(100, 5, 1_000)).build();
    client.getConnectionStateListenable().addListener((c, state) -> {
      if (!state.isConnected()) {
        lost.set(true);
      }
    });
    client.start();
    return client;
  }

  /** {@code work=curator}: an {@code InterProcessMutex} on {@code /faults}, held while the worker writes. */
  private void curatorLoop(Map<String, String> args, AtomicBoolean running, long interval) throws Exception {
    AtomicBoolean lost = new AtomicBoolean();
    try (org.apache.curator.framework.CuratorFramework client = curator(args, lost)) {
      var mutex = new org.apache.curator.framework.recipes.locks.InterProcessMutex(client, "/" + History.LOCK);
      boolean held = false;
      int failing = 0;
      while (running.get()) {
        if (!held) {
          long previous = capturedToken();
          lost.set(false);
          try {
            held = mutex.acquire(1, TimeUnit.SECONDS);
          } catch (Exception e) {
            print("LOCK " + now() + " " + exception(e));
            Thread.sleep(200);
            continue;
          }
          if (!held) {
            continue;
          }
          failing = 0;
          announceGrant(previous);
        }
        failing = capturedIteration(nextId()) ? 0 : failing + 1;
        if (lost.get() || failing >= GIVE_UP) {
          print("RELEASE " + now() + (lost.get() ? " session suspended or lost" : " " + failing + " failing iterations"));
          release(mutex);
          held = false;
        }
        Thread.sleep(interval);
      }
      if (held) {
        release(mutex);
      }
    }
  }

  private static void release(org.apache.curator.framework.recipes.locks.InterProcessMutex mutex) {
    try {
      mutex.release();
    } catch (Exception e) {
      print("RELEASE " + now() + " " + exception(e));
    }
  }

  /** {@code work=jetcd}: a jetcd {@code Lock} named {@code faults} on a lease the worker keeps alive. */
  private void jetcdLoop(Map<String, String> args, AtomicBoolean running, long interval) throws Exception {
    long ttlSeconds = Math.max(1, Long.parseLong(required(args, "ttl-ms")) / 1000);
    var name = io.etcd.jetcd.ByteSequence.from(History.LOCK, StandardCharsets.UTF_8);
    try (io.etcd.jetcd.Client client = io.etcd.jetcd.Client.builder()
        .endpoints(required(args, "coordinator").split(",")).build()) {
      AtomicBoolean lost = new AtomicBoolean();
      long lease = 0;
      io.etcd.jetcd.support.CloseableClient keepAlive = null;
      io.etcd.jetcd.ByteSequence key = null;
      int failing = 0;
      while (running.get()) {
        if (key == null) {
          long previous = capturedToken();
          lost.set(false);
          try {
            lease = client.getLeaseClient().grant(ttlSeconds).get(5, TimeUnit.SECONDS).getID();
            keepAlive = client.getLeaseClient().keepAlive(lease, new LeaseObserver(lost));
            key = client.getLockClient().lock(name, lease).get(30, TimeUnit.SECONDS).getKey();
          } catch (Exception e) {
            print("LOCK " + now() + " " + exception(e));
            giveUp(client, null, keepAlive, lease);
            keepAlive = null;
            Thread.sleep(200);
            continue;
          }
          failing = 0;
          announceGrant(previous);
        }
        failing = capturedIteration(nextId()) ? 0 : failing + 1;
        if (lost.get() || failing >= GIVE_UP) {
          print("RELEASE " + now() + (lost.get() ? " lease lost" : " " + failing + " failing iterations"));
          giveUp(client, key, keepAlive, lease);
          key = null;
          keepAlive = null;
        }
        Thread.sleep(interval);
      }
      if (key != null) {
        giveUp(client, key, keepAlive, lease);
      }
    }
  }

  /** Unlocks (when locked), stops the keepalive and revokes the lease, each best effort. */
  private static void giveUp(io.etcd.jetcd.Client client, io.etcd.jetcd.ByteSequence key,
      io.etcd.jetcd.support.CloseableClient keepAlive, long lease) {
    try {
      if (key != null) {
        client.getLockClient().unlock(key).get(2, TimeUnit.SECONDS);
      }
    } catch (Exception e) {
      print("RELEASE " + now() + " " + exception(e));
    }
    if (keepAlive != null) {
      keepAlive.close();
    }
    try {
      if (lease != 0) {
        client.getLeaseClient().revoke(lease).get(2, TimeUnit.SECONDS);
      }
    } catch (Exception e) {
      // expired or unreachable: it ends with its TTL
    }
  }

  /** The lease is lost when its keepalive stream ends or fails, or an answer gives it no time left. */
  private static final class LeaseObserver
      implements io.grpc.stub.StreamObserver<io.etcd.jetcd.lease.LeaseKeepAliveResponse> {
    private final AtomicBoolean lost;

    LeaseObserver(AtomicBoolean lost) {
      this.lost = lost;
    }

    @Override
    public void onNext(io.etcd.jetcd.lease.LeaseKeepAliveResponse r) {
      if (r.getTTL() <= 0) {
        lost.set(true);
      }
    }

    @Override
    public void onError(Throwable t) {
      lost.set(true);
    }

    @Override
    public void onCompleted() {
      lost.set(true);
    }
  }

  /**
   * {@code work=leader}: a Curator {@code LeaderSelector} on {@code /faults} whose {@code takeLeadership} starts a
   * scheduler that makes the writes every interval and waits; the listener gives the leadership up when the
   * connection is suspended or lost (Curator's adapter interrupts {@code takeLeadership}), which stops the scheduler.
   */
  private void leaderLoop(Map<String, String> args, AtomicBoolean running, long interval) throws Exception {
    java.util.concurrent.atomic.AtomicInteger leading = new java.util.concurrent.atomic.AtomicInteger();
    try (org.apache.curator.framework.CuratorFramework client = curator(args, new AtomicBoolean())) {
      var selector = new org.apache.curator.framework.recipes.leader.LeaderSelector(client, "/" + History.LOCK,
          new org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter() {
            @Override
            public void takeLeadership(org.apache.curator.framework.CuratorFramework c) throws Exception {
              leading.incrementAndGet();
              var scheduler = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
              java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
              try {
                announceGrant(0);
                int[] failing = {0};
                scheduler.scheduleWithFixedDelay(() -> {
                  if (!running.get()) {
                    done.countDown();
                    return;
                  }
                  failing[0] = capturedIteration(nextId()) ? 0 : failing[0] + 1;
                  if (failing[0] >= GIVE_UP) {
                    print("RELEASE " + now() + " " + failing[0] + " failing iterations");
                    done.countDown();
                  }
                }, 0, interval, TimeUnit.MILLISECONDS);
                done.await();
              } finally {
                scheduler.shutdownNow();
                scheduler.awaitTermination(15, TimeUnit.SECONDS);
                leading.decrementAndGet();
              }
            }
          });
      selector.autoRequeue();
      selector.start();
      while (running.get()) {
        Thread.sleep(100);
      }
      selector.close();
      for (int i = 0; i < 200 && leading.get() > 0; i++) {
        Thread.sleep(100);
      }
    }
  }

  private void iteration(String id) {
    if (locks.isEmpty()) {
      String status = status();
      attempt(id, "pg", status, () -> pgWrite(id, "pg_total", "pg_write"));
      attempt(id, "mariadb", status, () -> mariaWrite(id, "maria_write"));
      attempt(id, "http", status, () -> httpWrite(id));
      attempt(id, "kafka", status, () -> kafkaWrite(id));
      attempt(id, "pg-unfenced", status, () -> pgUnfencedWrite(id));
      attempt(id, "http-unfenced", status, () -> httpUnfencedWrite(id));
      attempt(id, "kafka-unfenced", status, () -> kafkaUnfencedWrite(id));
      return;
    }
    String body = statusBody();
    for (int i = 1; i <= locks.size(); i++) {
      int section = i;
      String lock = locks.get(i - 1);
      String lid = id + "/" + lock;
      String status = lockStatus(body, lock) + " " + lock;
      attempt(lid, "pg", status, () -> FaultSections.run(section, () -> pgWrite(lid, "pg_total_" + section,
          "pg_write_" + section)));
      attempt(lid, "mariadb", status, () -> FaultSections.run(section, () -> mariaWrite(lid, "maria_write_"
          + section)));
      attempt(lid, "http", status, () -> FaultSections.run(section, () -> httpWrite(lid)));
      attempt(lid, "kafka", status, () -> FaultSections.run(section, () -> kafkaWrite(lid)));
      attempt(lid, "pg-unfenced", status, () -> FaultSections.run(section, () -> pgUnfencedWrite(lid)));
      attempt(lid, "http-unfenced", status, () -> FaultSections.run(section, () -> httpUnfencedWrite(lid)));
      attempt(lid, "kafka-unfenced", status, () -> FaultSections.run(section, () -> kafkaUnfencedWrite(lid)));
    }
  }

  private interface Write {
    String run() throws Exception;
  }

  /** Whether the write was acknowledged. */
  private static boolean attempt(String id, String channel, String status, Write write) {
    print("ATTEMPT " + now() + " " + id + " " + channel + " " + status);
    String result;
    try {
      result = write.run();
    } catch (SQLException e) {
      result = "SQLSTATE " + e.getSQLState() + " " + firstLine(e.getMessage());
    } catch (ExecutionException e) {
      result = exception(e.getCause() == null ? e : e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      result = exception(e);
    } catch (Exception e) {
      result = exception(e);
    }
    print("OUTCOME " + now() + " " + id + " " + channel + " " + result);
    return result.equals("OK");
  }

  /** Epoch milliseconds of the real time, from the monotonic clock (see {@link #EPOCH_MS}). */
  static long now() {
    return EPOCH_MS + (System.nanoTime() - EPOCH_NANOS) / 1_000_000;
  }

  /** {@code <state> <token>} from the agent's status endpoint, or {@code UNKNOWN 0}. */
  private String status() {
    return lockStatus(statusBody(), null);
  }

  /** The agent's /status, or null. */
  private String statusBody() {
    try {
      return http.send(HttpRequest.newBuilder(statusUri).timeout(Duration.ofSeconds(1)).GET()
          .build(), HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** {@code <state> <token>} of {@code lock}'s entry in {@code locks[]} (null: the top level), or {@code UNKNOWN 0}. */
  static String lockStatus(String body, String lock) {
    return entryStatus(body, "locks", lock);
  }

  /**
   * {@code <state> <token>} of {@code lock}'s entry in the list {@code list} ({@code locks}, {@code captured}) of the
   * status (null lock: the top level), or {@code UNKNOWN 0}.
   */
  static String entryStatus(String body, String list, String lock) {
    if (body == null) {
      return "UNKNOWN 0";
    }
    String entry = body;
    if (lock != null) {
      int from = body.indexOf("\"" + list + "\":[");
      int at = from < 0 ? -1 : body.indexOf("{\"lock\":\"" + lock + "\"", from);
      if (at < 0 || at > listEnd(body, from)) {
        return "UNKNOWN 0";
      }
      entry = body.substring(at);
    }
    Matcher state = STATE.matcher(entry);
    Matcher token = TOKEN.matcher(entry);
    return (state.find() ? state.group(1) : "UNKNOWN") + " " + (token.find() ? token.group(1) : "0");
  }

  /** Where the JSON array that opens at the first '[' after {@code from} closes (the text's end if it does not). */
  private static int listEnd(String body, int from) {
    int depth = 0;
    for (int i = body.indexOf('[', from); i >= 0 && i < body.length(); i++) {
      char c = body.charAt(i);
      if (c == '[') {
        depth++;
      } else if (c == ']' && --depth == 0) {
        return i;
      }
    }
    return body.length();
  }

  private Connection pg() throws SQLException {
    if (pg == null || pg.isClosed()) {
      pg = DriverManager.getConnection(pgUrl);
    }
    return pg;
  }

  private void pgStatements(Connection c, String id, String totalTable, String writeTable) throws SQLException {
    try (Statement s = c.createStatement();
        PreparedStatement insert = c.prepareStatement("INSERT INTO " + writeTable
            + " (write_id, worker) VALUES (?, ?)")) {
      s.executeUpdate("UPDATE " + totalTable + " SET n = n + 1 WHERE id = 1");
      s.execute("SELECT pg_sleep(0.02)");
      insert.setString(1, id);
      insert.setString(2, name);
      insert.executeUpdate();
    }
    if (outboxHttp != null && !mariaOutbox) {
      outboxEvents(c, id);
    }
  }

  /**
   * The events of the transaction: the outbox table's trigger fills their lock, token and grant from the session
   * values the agent set, and its fence refuses them with the transaction's other writes when the token is stale.
   */
  private void outboxEvents(Connection c, String id) throws SQLException {
    try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + OUTBOX_TABLE
        + " (event_id, channel, target, message_key, payload) VALUES (?, 'http', ?, ?, ?), (?, 'kafka', ?, ?, ?)")) {
      insert.setString(1, id + "/http");
      insert.setString(2, outboxHttp);
      insert.setString(3, name);
      insert.setString(4, id);
      insert.setString(5, id + "/kafka");
      insert.setString(6, outboxTopic);
      insert.setString(7, name);
      insert.setString(8, id);
      insert.executeUpdate();
    }
  }

  private String pgWrite(String id, String totalTable, String writeTable) throws SQLException {
    Connection c = pg();
    try {
      c.setAutoCommit(false);
      pgStatements(c, id, totalTable, writeTable);
      c.commit();
      return "OK";
    } catch (SQLException e) {
      reset(c, e);
      throw e;
    }
  }

  private String mariaWrite(String id, String table) throws SQLException {
    if (maria == null || maria.isClosed()) {
      maria = DriverManager.getConnection(mariaUrl);
    }
    try (PreparedStatement insert = maria.prepareStatement(
        "INSERT INTO " + table + " (write_id, worker) VALUES (?, ?)")) {
      boolean events = outboxHttp != null && mariaOutbox;
      maria.setAutoCommit(!events);
      insert.setString(1, id);
      insert.setString(2, name);
      insert.executeUpdate();
      if (events) {
        // One transaction: the business row and its events commit together, or neither does.
        outboxEvents(maria, id);
        maria.commit();
      }
      return "OK";
    } catch (SQLException e) {
      reset(maria, e);
      throw e;
    }
  }

  /** Rolls back what a failed statement left; a broken connection is closed and reopened on the next write. */
  private static void reset(Connection c, SQLException e) {
    try {
      if (e.getSQLState() != null && e.getSQLState().startsWith("08")) {
        c.close();
      } else if (!c.getAutoCommit()) {
        c.rollback();
      }
    } catch (SQLException ignored) {
      try {
        c.close();
      } catch (SQLException alsoIgnored) {
        // gone
      }
    }
  }

  private String httpWrite(String id) throws IOException, InterruptedException {
    return post(httpUri, id);
  }

  /** POSTs {@code id} to {@code uri}: {@code OK} on a 200, else the status and the first line of the body. */
  private String post(URI uri, String id) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5))
        .POST(HttpRequest.BodyPublishers.ofString(id)).build(), HttpResponse.BodyHandlers.ofString());
    return r.statusCode() == 200 ? "OK" : "HTTP " + r.statusCode() + " " + firstLine(r.body());
  }

  private String kafkaWrite(String id) throws InterruptedException, ExecutionException, TimeoutException {
    return send(producer, topic, id);
  }

  /** Sends a record keyed and valued {@code id} to {@code to} and waits for the broker's acknowledgement. */
  private static String send(KafkaProducer<String, String> through, String to, String id)
      throws InterruptedException, ExecutionException, TimeoutException {
    through.send(new ProducerRecord<>(to, id, id)).get(10, TimeUnit.SECONDS);
    return "OK";
  }

  /**
   * A record on the fenced topic whose send callback, on the producer's I/O thread, writes the record's id
   * ({@code <id>.cb}) to the unfenced table once the broker acknowledged it: an attempt of its own.
   */
  private String kafkaWriteWithCallback(String id, String status) throws InterruptedException, ExecutionException,
      TimeoutException {
    producer.send(new ProducerRecord<>(topic, id, id), (metadata, e) -> {
      if (e == null) {
        attempt(id + ".cb", "pg-unfenced", status, () -> callbackWrite(id + ".cb"));
      }
    }).get(10, TimeUnit.SECONDS);
    return "OK";
  }

  /** On the producer's I/O thread: a connection of its own, with short timeouts (it holds up the producer). */
  private String callbackWrite(String id) throws SQLException {
    if (pgCallback == null || pgCallback.isClosed()) {
      pgCallback = DriverManager.getConnection(pgDirectUrl.replace("socketTimeout=30", "socketTimeout=5")
          + "&connectTimeout=2");
    }
    Connection c = pgCallback;
    try {
      insertUnfenced(c, id);
      return "OK";
    } catch (SQLException e) {
      reset(c, e);
      throw e;
    }
  }

  /** The connection to the unfenced table, opened when needed (autocommit unless a caller changes it). */
  private Connection pgUnfenced() throws SQLException {
    if (pgUnfenced == null || pgUnfenced.isClosed()) {
      pgUnfenced = DriverManager.getConnection(pgDirectUrl);
    }
    return pgUnfenced;
  }

  private String pgUnfencedWrite(String id) throws SQLException {
    Connection c = pgUnfenced();
    try {
      c.setAutoCommit(true);
      insertUnfenced(c, id);
      return "OK";
    } catch (SQLException e) {
      reset(c, e);
      throw e;
    }
  }

  private void insertUnfenced(Connection c, String id) throws SQLException {
    try (PreparedStatement insert = c.prepareStatement("INSERT INTO pg_unfenced (write_id, worker) VALUES (?, ?)")) {
      insert.setString(1, id);
      insert.setString(2, name);
      insert.executeUpdate();
    }
  }

  private String httpUnfencedWrite(String id) throws IOException, InterruptedException {
    return post(unfencedHttpUri, id);
  }

  private String kafkaUnfencedWrite(String id) throws InterruptedException, ExecutionException, TimeoutException {
    return send(unfencedProducer, unfencedTopic, id);
  }

  /** The exception and its causes' class names joined by '<', then the first line of its message. */
  private static String exception(Throwable e) {
    StringBuilder classes = new StringBuilder(e.getClass().getName());
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      classes.append('<').append(c.getClass().getName());
    }
    return "EXC " + classes + " " + firstLine(e.getMessage());
  }

  private static void awaitStop(AtomicBoolean running) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        if (line.strip().equals("stop")) {
          running.set(false);
          return;
        }
      }
    } catch (IOException e) {
      // No stdin: run until shut down.
    }
  }

  private static synchronized void print(String line) {
    System.out.println(line);
    System.out.flush();
  }

  private static String required(Map<String, String> args, String key) {
    String value = args.get(key);
    if (value == null) {
      throw new IllegalArgumentException("missing argument " + key + "=...");
    }
    return value;
  }

  private static String firstLine(String text) {
    if (text == null) {
      return "";
    }
    String line = text.strip();
    int nl = line.indexOf('\n');
    return nl < 0 ? line : line.substring(0, nl);
  }
}
