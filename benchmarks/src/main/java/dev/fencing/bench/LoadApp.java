package dev.fencing.bench;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.protocol.HttpHeaderNames;
import dev.fencing.protocol.KafkaHeaderNames;
import dev.fencing.protocol.SqlStates;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The ordinary application the load benchmarks launch, with no agent, with ours, or with the OpenTelemetry agent. For
 * each scenario it warms up, measures, and prints {@code result <scenario> <ops/s> <p50 µs> <p99 µs> <CPU ns/op>}
 * (the CPU time of the whole JVM over the measured window, per operation). With -Dbench.threads=true (one-thread
 * scenarios), also each thread's CPU time (JIT compiler and GC threads included) and each Java thread's allocated
 * bytes per operation over that window: which thread the time went to.
 *
 * <pre>
 * LoadApp pg &lt;jdbc url&gt; &lt;warm-up s&gt; &lt;measure s&gt; &lt;table&gt;:&lt;connections&gt;...
 *     single-row UPDATE (PreparedStatement, autocommit), one connection per thread, each thread its own row
 * LoadApp outbox-tx &lt;jdbc url&gt; &lt;warm-up s&gt; &lt;measure s&gt; &lt;outbox table&gt; &lt;shape&gt;:&lt;threads&gt;...
 *     one transaction per operation (OutboxBench): update = UPDATE of the thread's row of bench_fenced, COMMIT;
 *     outbox-many = the same plus one outbox INSERT whose message key cycles over 1000 keys of the thread's own;
 *     outbox-one = the same plus one outbox INSERT, every event of every thread with the same key
 * LoadApp http &lt;warm-up s&gt; &lt;measure s&gt; jdk|okhttp|apache...
 *     POST of a small JSON body to a loopback JDK HttpServer, one client thread
 *     (-Dbench.fencing-headers=true: the application sends the agent's three headers itself)
 * LoadApp kafka &lt;bootstrap&gt; &lt;topic&gt; &lt;warm-up s&gt; &lt;measure s&gt;
 *     1 KB records, acks=1: kafka-async sends as fast as the producer takes them (throughput; its latency, send to
 *     acknowledgement, is mostly time queued in the producer's buffer); kafka-sync waits for each acknowledgement
 *     (latency of one record in flight, linger.ms=0)
 * LoadApp failover &lt;jdbc url&gt; &lt;table&gt;
 *     an UPDATE every 2 ms forever; prints "accepted &lt;System.nanoTime&gt;" at its first accepted write and
 *     "refused" at its first refused one (a standby's)
 * </pre>
 */
public final class LoadApp {
  private static final String JSON = "{\"id\":7,\"amount\":10}";
  /**
   * With -Dbench.fencing-headers=true the application itself sends the three headers the agent adds to each POST and
   * each Kafka record (token, lock and grant, with values of the agent's lengths), for a no-agent run that pays what
   * carrying them costs (the in-process HTTP server's parsing, the bytes the producer and broker handle), as the
   * agent's run does.
   */
  private static final boolean FENCING_HEADERS = Boolean.getBoolean("bench.fencing-headers");
  /** An etcd lease id in hex, as the agent's Fencing-Grant carries it. */
  private static final String GRANT = "694d8f0a1b2c3d4e";

  private LoadApp() {}

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable t) {
      t.printStackTrace();
      System.exit(1); // the HTTP server's dispatcher thread would keep the JVM, and the driver waiting, forever
    }
    System.out.flush();
    System.exit(0); // producers, pools and agents' threads must not keep the JVM up
  }

  private static void run(String[] args) throws Exception {
    switch (args[0]) {
      case "pg":
        for (int i = 4; i < args.length; i++) {
          pg(args[1], Long.parseLong(args[2]), Long.parseLong(args[3]), args[i]);
        }
        break;
      case "outbox-tx":
        for (int i = 5; i < args.length; i++) {
          outboxTx(args[1], Long.parseLong(args[2]), Long.parseLong(args[3]), args[4], args[i]);
        }
        break;
      case "http":
        http(Long.parseLong(args[1]), Long.parseLong(args[2]), Arrays.copyOfRange(args, 3, args.length));
        break;
      case "kafka":
        kafka(args[1], args[2], Long.parseLong(args[3]), Long.parseLong(args[4]));
        break;
      case "failover":
        failover(args[1], args[2]);
        break;
      default:
        throw new IllegalArgumentException("unknown mode " + args[0]);
    }
  }

  /** One measured operation. */
  private interface Op {
    void run() throws Exception;
  }

  /** Latencies of one thread's measured operations, in ns, and the process's CPU time over its measured window. */
  private static final class Recorder {
    long[] values = new long[1 << 16];
    int n;
    long cpuStart;
    long cpuEnd;
    long uptimeStart;
    long uptimeEnd;
    Map<String, Long> allocStart;
    Map<String, Long> allocEnd;
    Map<String, Long> threadsStart;
    Map<String, Long> threadsEnd;

    void add(long v) {
      if (n == values.length) {
        values = Arrays.copyOf(values, n * 2);
      }
      values[n++] = v;
    }
  }

  private static void pg(String url, long warmSeconds, long measureSeconds, String scenario) throws Exception {
    String table = scenario.substring(0, scenario.indexOf(':'));
    int connections = Integer.parseInt(scenario.substring(scenario.indexOf(':') + 1));
    // One write before the clock starts: with an agent in standby=wait, it returns once the lease is held.
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement s = c.prepareStatement("UPDATE " + table + " SET v = v + 1 WHERE id = 1")) {
      s.executeUpdate();
    }
    Thread[] threads = new Thread[connections];
    Recorder[] recorders = new Recorder[connections];
    Exception[] failure = new Exception[1];
    long warmEnd = System.nanoTime() + warmSeconds * 1_000_000_000L + 500_000_000L; // + connecting
    long end = warmEnd + measureSeconds * 1_000_000_000L;
    for (int t = 0; t < connections; t++) {
      int row = t + 1;
      Recorder rec = recorders[t] = new Recorder();
      threads[t] = new Thread(() -> {
        try (Connection c = DriverManager.getConnection(url);
            PreparedStatement s = c.prepareStatement("UPDATE " + table + " SET v = v + 1 WHERE id = ?")) {
          s.setInt(1, row);
          loop(() -> {
            if (s.executeUpdate() != 1) {
              throw new IllegalStateException("row " + row + " of " + table + " missing");
            }
          }, warmEnd, end, rec);
        } catch (Exception e) {
          synchronized (failure) {
            failure[0] = e;
          }
        }
      });
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    if (failure[0] != null) {
      throw failure[0];
    }
    report(table + ":" + connections, recorders, measureSeconds);
  }

  /**
   * The outbox part's writing transaction (see the class comment): the business UPDATE, with or without one outbox
   * INSERT in plain SQL, committed; one connection per thread, each thread its own row.
   */
  private static void outboxTx(String url, long warmSeconds, long measureSeconds, String outbox, String scenario)
      throws Exception {
    String shape = scenario.substring(0, scenario.indexOf(':'));
    int threadCount = Integer.parseInt(scenario.substring(scenario.indexOf(':') + 1));
    if (!List.of("update", "outbox-many", "outbox-one").contains(shape)) {
      throw new IllegalArgumentException("unknown shape " + shape);
    }
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement s = c.prepareStatement("UPDATE bench_fenced SET v = v + 1 WHERE id = 1")) {
      s.executeUpdate(); // with standby=wait, returns once the lease is held
    }
    Thread[] threads = new Thread[threadCount];
    Recorder[] recorders = new Recorder[threadCount];
    Exception[] failure = new Exception[1];
    long warmEnd = System.nanoTime() + warmSeconds * 1_000_000_000L + 500_000_000L;
    long end = warmEnd + measureSeconds * 1_000_000_000L;
    for (int t = 0; t < threadCount; t++) {
      int row = t + 1;
      Recorder rec = recorders[t] = new Recorder();
      threads[t] = new Thread(() -> {
        try (Connection c = DriverManager.getConnection(url);
            PreparedStatement u = c.prepareStatement("UPDATE bench_fenced SET v = v + 1 WHERE id = ?");
            PreparedStatement ins = c.prepareStatement("INSERT INTO " + outbox
                + " (channel, target, message_key, payload) VALUES ('http', 'http://127.0.0.1:9/hook', ?, ?)")) {
          c.setAutoCommit(false);
          u.setInt(1, row);
          long[] i = {0};
          loop(() -> {
            if (u.executeUpdate() != 1) {
              throw new IllegalStateException("row " + row + " of bench_fenced missing");
            }
            if (!shape.equals("update")) {
              ins.setString(1, shape.equals("outbox-one") ? "all" : "t" + row + "-" + (i[0] % 1000));
              ins.setString(2, JSON);
              ins.executeUpdate();
            }
            i[0]++;
            c.commit();
          }, warmEnd, end, rec);
        } catch (Exception e) {
          synchronized (failure) {
            failure[0] = e;
          }
        }
      });
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    if (failure[0] != null) {
      throw failure[0];
    }
    report(scenario, recorders, measureSeconds);
  }

  private static HttpServer startServer(int port) throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
    server.createContext("/orders", ex -> {
      try (InputStream in = ex.getRequestBody()) {
        in.readAllBytes();
      }
      ex.sendResponseHeaders(204, -1);
      ex.close();
    });
    server.start();
    return server;
  }

  private static void http(long warmSeconds, long measureSeconds, String[] clients) throws Exception {
    HttpServer server = startServer(0);
    httpClients("http://127.0.0.1:" + server.getAddress().getPort() + "/orders", warmSeconds, measureSeconds, clients);
    server.stop(0);
  }

  private static void httpClients(String url, long warmSeconds, long measureSeconds, String[] clients)
      throws Exception {
    for (String client : clients) {
      Op op;
      AutoCloseable close = () -> { };
      switch (client) {
        case "jdk": {
          HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
          HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
              .POST(HttpRequest.BodyPublishers.ofString(JSON));
          if (FENCING_HEADERS) {
            b.header(HttpHeaderNames.TOKEN, "1234").header(HttpHeaderNames.LOCK, "bench-http")
                .header(HttpHeaderNames.GRANT, GRANT);
          }
          HttpRequest request = b.build();
          op = () -> status(c.send(request, HttpResponse.BodyHandlers.discarding()).statusCode());
          break;
        }
        case "okhttp": {
          OkHttpClient c = new OkHttpClient();
          okhttp3.Request.Builder b = new okhttp3.Request.Builder().url(url)
              .post(RequestBody.create(JSON, MediaType.get("application/json")));
          if (FENCING_HEADERS) {
            b.header(HttpHeaderNames.TOKEN, "1234").header(HttpHeaderNames.LOCK, "bench-http")
                .header(HttpHeaderNames.GRANT, GRANT);
          }
          okhttp3.Request request = b.build();
          op = () -> {
            try (Response r = c.newCall(request).execute()) {
              status(r.code());
            }
          };
          close = () -> {
            c.dispatcher().executorService().shutdown();
            c.connectionPool().evictAll();
          };
          break;
        }
        case "apache": {
          CloseableHttpClient c = HttpClients.createDefault();
          op = () -> {
            HttpPost post = new HttpPost(url);
            post.setEntity(new StringEntity(JSON, ContentType.APPLICATION_JSON));
            if (FENCING_HEADERS) {
              post.setHeader(HttpHeaderNames.TOKEN, "1234");
              post.setHeader(HttpHeaderNames.LOCK, "bench-http");
              post.setHeader(HttpHeaderNames.GRANT, GRANT);
            }
            status(c.execute(post, r -> {
              EntityUtils.consume(r.getEntity());
              return r.getCode();
            }));
          };
          close = c;
          break;
        }
        default:
          throw new IllegalArgumentException("unknown client " + client);
      }
      op.run(); // the first POST waits for the lease (agent in standby=wait): before the clock starts
      long warmEnd = System.nanoTime() + warmSeconds * 1_000_000_000L;
      Recorder rec = new Recorder();
      loop(op, warmEnd, warmEnd + measureSeconds * 1_000_000_000L, rec);
      close.close();
      report(client, new Recorder[] {rec}, measureSeconds);
    }
  }

  private static void status(int code) {
    if (code != 204) {
      throw new IllegalStateException("status " + code);
    }
  }

  private static void loop(Op op, long warmEnd, long end, Recorder rec) throws Exception {
    long now = System.nanoTime();
    while (now < warmEnd) {
      op.run();
      now = System.nanoTime();
    }
    rec.threadsStart = threadCpu();
    rec.allocStart = threadAlloc();
    rec.uptimeStart = ManagementFactory.getRuntimeMXBean().getUptime();
    rec.cpuStart = processCpuNanos();
    while (now < end) {
      op.run();
      long after = System.nanoTime();
      rec.add(after - now);
      now = after;
    }
    rec.cpuEnd = processCpuNanos();
    rec.uptimeEnd = ManagementFactory.getRuntimeMXBean().getUptime();
    rec.threadsEnd = threadCpu();
    rec.allocEnd = threadAlloc();
  }

  /**
   * With -Dbench.threads=true: CPU time of each thread of this process (JVM threads too: compiler, GC), in ns, keyed
   * "comm#tid", from /proc/self/task/TID/schedstat (Linux); otherwise null.
   */
  private static Map<String, Long> threadCpu() {
    if (!Boolean.getBoolean("bench.threads")) {
      return null;
    }
    Map<String, Long> m = new HashMap<>();
    File[] tasks = new File("/proc/self/task").listFiles();
    for (File t : tasks == null ? new File[0] : tasks) {
      try {
        String comm = Files.readString(new File(t, "comm").toPath()).trim();
        String stat = Files.readString(new File(t, "schedstat").toPath()).trim();
        m.put(comm + "#" + t.getName(), Long.parseLong(stat.substring(0, stat.indexOf(' '))));
      } catch (IOException | RuntimeException e) {
        // the thread ended meanwhile
      }
    }
    return m;
  }

  /** With -Dbench.threads=true: bytes allocated by each live Java thread (name#id); otherwise null. */
  private static Map<String, Long> threadAlloc() {
    if (!Boolean.getBoolean("bench.threads")) {
      return null;
    }
    com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    Map<String, Long> m = new HashMap<>();
    for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
      if (t != null) {
        m.put(t.getThreadName() + "#" + t.getThreadId(), mx.getThreadAllocatedBytes(t.getThreadId()));
      }
    }
    return m;
  }

  /**
   * With -Dbench.threads=true: each thread's CPU time and each Java thread's allocated bytes over the measured window,
   * per operation, largest CPU first (threads that ended within the window are missing).
   */
  private static void printThreads(String scenario, Recorder rec) {
    if (rec.threadsStart == null) {
      return;
    }
    long liveTotal = 0;
    List<Map.Entry<String, Long>> l = new ArrayList<>();
    for (Map.Entry<String, Long> e : rec.threadsEnd.entrySet()) {
      long d = e.getValue() - rec.threadsStart.getOrDefault(e.getKey(), 0L);
      liveTotal += d;
      l.add(Map.entry(e.getKey(), d));
    }
    l.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
    long ops = Math.max(1, rec.n);
    System.out.println("threads " + scenario + " live-threads-ns/op " + liveTotal / ops + " process-ns/op "
        + (rec.cpuEnd - rec.cpuStart) / ops + " window-uptime-ms " + rec.uptimeStart + " " + rec.uptimeEnd);
    for (Map.Entry<String, Long> e : rec.allocEnd.entrySet()) {
      long b = (e.getValue() - rec.allocStart.getOrDefault(e.getKey(), 0L)) / ops;
      if (b > 0) {
        System.out.println("  alloc " + scenario + " " + b + " " + e.getKey().replace(' ', '_'));
      }
    }
    for (Map.Entry<String, Long> e : l) {
      if (e.getValue() / ops > 0) {
        System.out.println("  thread " + scenario + " " + e.getValue() / ops + " " + e.getKey().replace(' ', '_'));
      }
    }
  }

  /** CPU time of this whole JVM (every thread: app, agent, JIT, GC), in ns. */
  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /**
   * The header the agent adds to each record (-Dbench.fencing-headers), a value of the agent's length in its form
   * ({@code <token>;<lock>;<grant>}). Constants only: the app's class path has no fencing-protocol classes.
   */
  private static final List<Header> KAFKA_HEADERS = List.of(new RecordHeader(KafkaHeaderNames.FENCING,
      ("1234;bench-kafka;" + GRANT).getBytes(StandardCharsets.US_ASCII)));

  /** A record of {@code value}; with -Dbench.fencing-headers, carrying the agent's header, set by the app. */
  private static ProducerRecord<byte[], byte[]> record(String topic, byte[] value) {
    return FENCING_HEADERS ? new ProducerRecord<>(topic, null, (byte[]) null, value, KAFKA_HEADERS)
        : new ProducerRecord<>(topic, value);
  }

  private static void kafka(String bootstrap, String topic, long warmSeconds, long measureSeconds) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "1");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false"); // acks=1 excludes idempotence
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    byte[] value = new byte[1024];
    Arrays.fill(value, (byte) 'x');
    // Latencies of the measured records, written by the producer's I/O thread.
    AtomicLongArray latencies = new AtomicLongArray(1 << 23);
    AtomicLong acked = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    int sent = 0;
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      // The first record waits for metadata and, with an agent in standby=wait, the lease: before the clock starts.
      producer.send(record(topic, value)).get();
      long warmEnd = System.nanoTime() + warmSeconds * 1_000_000_000L;
      long now = System.nanoTime();
      while (now < warmEnd) {
        producer.send(record(topic, value), (m, e) -> {
          if (e != null) {
            failed.incrementAndGet();
          }
        });
        now = System.nanoTime();
      }
      producer.flush();
      long cpuStart = processCpuNanos();
      long start = System.nanoTime();
      long end = start + measureSeconds * 1_000_000_000L;
      now = start;
      while (now < end && sent < latencies.length()) {
        int i = sent++;
        long at = now;
        producer.send(record(topic, value), (m, e) -> {
          if (e != null) {
            failed.incrementAndGet();
          } else {
            latencies.set(i, System.nanoTime() - at);
            acked.incrementAndGet();
          }
        });
        now = System.nanoTime();
      }
      producer.flush(); // throughput counts acknowledged records: until the last one is acknowledged
      long done = System.nanoTime();
      long cpu = processCpuNanos() - cpuStart;
      if (failed.get() > 0) {
        throw new IllegalStateException(failed.get() + " records failed");
      }
      long[] l = new long[sent];
      for (int i = 0; i < sent; i++) {
        l[i] = latencies.get(i);
      }
      Arrays.sort(l);
      System.out.println("result kafka-async " + (long) (acked.get() / ((done - start) / 1e9)) + " " + l[sent / 2] / 1000
          + " " + l[(int) (sent * 0.99)] / 1000 + " " + cpu / Math.max(1, acked.get()));
    }
    // Latency without queueing: one record in flight, send to acknowledgement, and no linger (the default 5 ms of
    // Kafka 4 would be most of it).
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      producer.send(record(topic, value)).get();
      long warmEnd = System.nanoTime() + warmSeconds * 1_000_000_000L;
      Recorder rec = new Recorder();
      loop(() -> producer.send(record(topic, value)).get(), warmEnd,
          warmEnd + measureSeconds * 1_000_000_000L, rec);
      report("kafka-sync", new Recorder[] {rec}, measureSeconds);
    }
  }

  private static void report(String scenario, Recorder[] recorders, long measureSeconds) {
    int n = 0;
    for (Recorder r : recorders) {
      n += r.n;
    }
    long[] all = new long[n];
    int at = 0;
    for (Recorder r : recorders) {
      System.arraycopy(r.values, 0, all, at, r.n);
      at += r.n;
    }
    Arrays.sort(all);
    // Every thread's window is the same (same start and end times): the first one's CPU time is the process's.
    long cpu = recorders[0].cpuEnd - recorders[0].cpuStart;
    System.out.println("result " + scenario + " " + n / measureSeconds + " " + all[n / 2] / 1000 + " "
        + all[(int) (n * 0.99)] / 1000 + " " + cpu / Math.max(1, n));
    if (recorders.length == 1) {
      printThreads(scenario, recorders[0]);
    }
    System.out.flush();
  }

  private static void failover(String url, String table) throws Exception {
    boolean accepted = false;
    boolean refused = false;
    Connection c = DriverManager.getConnection(url);
    PreparedStatement s = c.prepareStatement("UPDATE " + table + " SET v = v + 1 WHERE id = 1");
    while (true) {
      try {
        s.executeUpdate();
        if (!accepted) {
          accepted = true;
          System.out.println("accepted " + System.nanoTime());
          System.out.flush();
        }
      } catch (SQLException e) {
        if (!refused) {
          refused = true;
          System.out.println("refused " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
          System.out.flush();
        }
        if (!SqlStates.BLOCKED_BY_AGENT.equals(e.getSQLState())) {
          // The fence refused a write (FN001/FN002): the transaction is gone, the connection still works.
          c.isValid(1);
        }
      }
      Thread.sleep(2);
    }
  }
}
