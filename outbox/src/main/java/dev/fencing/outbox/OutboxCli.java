package dev.fencing.outbox;

import com.sun.net.httpserver.HttpServer;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code java -jar fencing-agent.jar outbox relay ...}: the relay as a process of its own. Exit code 2 for bad
 * arguments (naming the option and what it expects), 1 when the database cannot be reached at start; otherwise it
 * runs until stopped (SIGTERM: the batch in hand is finished and marked).
 */
public final class OutboxCli {

  public static final String USAGE = ""
      + "usage:\n"
      + "  outbox relay --jdbc-url URL [--user U --password-file F] [--driver-jar J] --table T\n"
      + "               [--kafka-bootstrap HOST:PORT[,...] --kafka-jar JARS] [--kafka-property KEY=VALUE ...]\n"
      + "               [--metrics-port N] [--poll-interval D] [--no-listen] [--channel NAME]\n"
      + "               [--max-attempts N] [--backoff D] [--backoff-cap D] [--claim-timeout D]\n"
      + "               [--request-timeout D] [--batch-size N] [--concurrency N] [--relay-id ID]\n"
      + "               [--stats-interval D]\n"
      + "\n"
      + "  relay  delivers the committed events of the outbox table T (HTTP and Kafka) with each row's fencing\n"
      + "         token headers and its event id as idempotency key; runs until stopped\n"
      + "\n"
      + "  --table            [schema.]table, letters, digits and _ only\n"
      + "  --driver-jar       a JDBC driver jar, when the driver is not on the class path\n"
      + "  --kafka-bootstrap  Kafka's bootstrap.servers; needed for Kafka events\n"
      + "  --kafka-jar        kafka-clients and slf4j-api jars, or a folder of jars ('" + File.pathSeparator
      + "'-separated)\n"
      + "  --kafka-property   a producer setting (security, client.id); may repeat\n"
      + "  --metrics-port     serve Prometheus metrics on http://0.0.0.0:N/metrics (0: any free port)\n"
      + "  --poll-interval    look for due events this often (default 1s; 30s on PostgreSQL, which LISTENs)\n"
      + "  --no-listen        no PostgreSQL LISTEN: poll only\n"
      + "  --channel          the PostgreSQL notification channel (default: the table name, no schema, lower case)\n"
      + "  --max-attempts     park an event after this many failed attempts (default 10)\n"
      + "  --backoff          the pause after the first failed attempt, doubled per attempt (default 1s)\n"
      + "  --backoff-cap      the longest pause between attempts (default 5m)\n"
      + "  --claim-timeout    a claim holds this long; then another relay may deliver (default 60s)\n"
      + "  --request-timeout  the longest an HTTP request or Kafka ack may take (default 30s; below the claim)\n"
      + "  --batch-size       events claimed at once (default 100)\n"
      + "  --concurrency      deliveries in flight at once (default 4)\n"
      + "  --relay-id         this relay's name in claimed_by (default pid@host/random)\n"
      + "  --stats-interval   read the table's pending and parked counts for the metrics this often (default 15s)\n"
      + "\n"
      + "Durations: a number with ms, s, m or h (500ms, 10s, 5m).\n";

  private static final Set<String> FLAGS = Set.of("--no-listen");
  private static final Set<String> OPTIONS = Set.of("--jdbc-url", "--user", "--password-file", "--driver-jar",
      "--table", "--kafka-bootstrap", "--kafka-jar", "--kafka-property", "--metrics-port", "--poll-interval",
      "--channel", "--max-attempts", "--backoff", "--backoff-cap", "--claim-timeout", "--request-timeout",
      "--batch-size", "--concurrency", "--relay-id", "--stats-interval");
  private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s|m|h)");

  private OutboxCli() {}

  public static int run(String[] args, PrintStream out) {
    List<String> list = Arrays.asList(args);
    if (!list.isEmpty() && list.get(0).equals("outbox")) {
      list = list.subList(1, list.size());
    }
    if (list.isEmpty() || List.of("--help", "-h", "help").contains(list.get(0))) {
      out.print(USAGE);
      return list.isEmpty() ? 2 : 0;
    }
    Map<String, String> options = new HashMap<>();
    Map<String, String> kafkaProperties = new LinkedHashMap<>();
    OutboxRelay relay;
    Integer metricsPort;
    try {
      if (!list.get(0).equals("relay")) {
        throw new IllegalArgumentException("unknown outbox command '" + list.get(0) + "': expected relay");
      }
      options = parse(list.subList(1, list.size()), kafkaProperties);
      metricsPort = options.containsKey("--metrics-port") ? port(options.get("--metrics-port")) : null;
      relay = relay(options, kafkaProperties, out);
    } catch (IllegalArgumentException e) {
      out.println("outbox: " + e.getMessage());
      out.print(USAGE);
      return 2;
    }
    HttpServer server = null;
    try {
      relay.start();
      if (metricsPort != null) {
        server = metrics(relay, metricsPort);
        out.println("outbox relay: metrics on http://0.0.0.0:" + server.getAddress().getPort() + "/metrics");
      }
    } catch (SQLException e) {
      out.println("outbox relay failed: " + e.getMessage()
          + (e.getSQLState() == null ? "" : " (SQLSTATE " + e.getSQLState() + ")"));
      relay.close();
      return 1;
    } catch (IOException e) {
      out.println("outbox relay failed: cannot serve metrics on port " + metricsPort + ": " + e.getMessage());
      relay.close();
      return 1;
    }
    out.println("outbox relay: " + relay.relayId() + " running on " + options.get("--table"));
    out.flush();
    CountDownLatch stopped = new CountDownLatch(1);
    HttpServer metricsServer = server;
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      relay.close();
      if (metricsServer != null) {
        metricsServer.stop(0);
      }
      stopped.countDown();
    }, "fencing-outbox-shutdown"));
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }

  private static Map<String, String> parse(List<String> args, Map<String, String> kafkaProperties) {
    Map<String, String> parsed = new HashMap<>();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        value = arg.substring(eq + 1);
        arg = arg.substring(0, eq);
      }
      if (FLAGS.contains(arg)) {
        if (value != null) {
          throw new IllegalArgumentException(arg + " takes no value");
        }
        parsed.put(arg, "true");
      } else if (OPTIONS.contains(arg)) {
        if (value == null) {
          if (i + 1 >= args.size() || args.get(i + 1).startsWith("--")) {
            throw new IllegalArgumentException(arg + " needs a value");
          }
          value = args.get(++i);
        }
        if (arg.equals("--kafka-property")) {
          int kv = value.indexOf('=');
          if (kv <= 0) {
            throw new IllegalArgumentException("--kafka-property: KEY=VALUE expected, got '" + value + "'");
          }
          kafkaProperties.put(value.substring(0, kv), value.substring(kv + 1));
        } else if (parsed.put(arg, value) != null) {
          throw new IllegalArgumentException(arg + " given twice");
        }
      } else {
        throw new IllegalArgumentException("unknown argument '" + arg + "'");
      }
    }
    return parsed;
  }

  private static OutboxRelay relay(Map<String, String> o, Map<String, String> kafkaProperties, PrintStream out) {
    String url = required(o, "--jdbc-url");
    String table = required(o, "--table");
    if (o.containsKey("--password-file") && !o.containsKey("--user")) {
      throw new IllegalArgumentException("--password-file needs --user");
    }
    if (o.containsKey("--kafka-jar") && !o.containsKey("--kafka-bootstrap")) {
      throw new IllegalArgumentException("--kafka-jar needs --kafka-bootstrap");
    }
    if (!kafkaProperties.isEmpty() && !o.containsKey("--kafka-bootstrap")) {
      throw new IllegalArgumentException("--kafka-property needs --kafka-bootstrap");
    }
    Properties credentials = credentials(o);
    Driver driver = o.containsKey("--driver-jar") ? driver(Path.of(o.get("--driver-jar")), url) : null;
    OutboxRelay.ConnectionSource connections = () -> connect(driver, url, credentials);
    OutboxRelay.Builder b;
    try {
      b = OutboxRelay.builder(connections, table);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--table: " + e.getMessage().replaceFirst("^table: ", ""));
    }
    if (o.containsKey("--kafka-bootstrap")) {
      String servers = o.get("--kafka-bootstrap");
      if (!servers.matches("[^,\\s]+:\\d{1,5}(,[^,\\s]+:\\d{1,5})*")) {
        throw new IllegalArgumentException("--kafka-bootstrap: HOST:PORT[,HOST:PORT...] expected, got '" + servers
            + "'");
      }
      b.kafkaBootstrap(servers);
      kafkaProperties.forEach(b::kafkaProperty);
      if (o.containsKey("--kafka-jar")) {
        b.kafkaClassLoader(kafkaLoader(o.get("--kafka-jar")));
      }
    }
    if (o.containsKey("--poll-interval")) {
      b.pollInterval(duration(o, "--poll-interval"));
    }
    if (o.containsKey("--no-listen")) {
      b.listen(false);
    }
    if (o.containsKey("--channel")) {
      b.channel(o.get("--channel"));
    }
    if (o.containsKey("--max-attempts")) {
      b.maxAttempts(count(o, "--max-attempts"));
    }
    if (o.containsKey("--backoff")) {
      b.backoff(duration(o, "--backoff"));
    }
    if (o.containsKey("--backoff-cap")) {
      b.backoffCap(duration(o, "--backoff-cap"));
    }
    if (o.containsKey("--claim-timeout")) {
      b.claimTimeout(duration(o, "--claim-timeout"));
    }
    if (o.containsKey("--request-timeout")) {
      b.requestTimeout(duration(o, "--request-timeout"));
    }
    if (o.containsKey("--stats-interval")) {
      b.statsInterval(duration(o, "--stats-interval"));
    }
    if (o.containsKey("--batch-size")) {
      b.batchSize(count(o, "--batch-size"));
    }
    if (o.containsKey("--concurrency")) {
      b.concurrency(count(o, "--concurrency"));
    }
    if (o.containsKey("--relay-id")) {
      try {
        b.relayId(o.get("--relay-id"));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--relay-id: " + e.getMessage());
      }
    }
    b.log(out);
    return b.build();
  }

  private static String required(Map<String, String> options, String key) {
    String value = options.get(key);
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("missing " + key);
    }
    return value;
  }

  static Duration duration(Map<String, String> options, String key) {
    String v = options.get(key);
    Matcher m = DURATION.matcher(v);
    if (!m.matches() || Long.parseLong(m.group(1)) == 0) {
      throw new IllegalArgumentException(key + ": a positive duration such as 500ms, 10s or 5m expected, got '" + v
          + "'");
    }
    long n = Long.parseLong(m.group(1));
    switch (m.group(2)) {
      case "ms":
        return Duration.ofMillis(n);
      case "s":
        return Duration.ofSeconds(n);
      case "m":
        return Duration.ofMinutes(n);
      default:
        return Duration.ofHours(n);
    }
  }

  private static int count(Map<String, String> options, String key) {
    String v = options.get(key);
    try {
      int n = Integer.parseInt(v);
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException(key + ": a whole number of 1 or more expected, got '" + v + "'");
  }

  private static int port(String v) {
    try {
      int n = Integer.parseInt(v);
      if (n >= 0 && n <= 65535) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException("--metrics-port: a port from 0 to 65535 expected, got '" + v + "'");
  }

  private static Properties credentials(Map<String, String> o) {
    Properties props = new Properties();
    if (o.containsKey("--user")) {
      props.setProperty("user", o.get("--user"));
    }
    if (o.containsKey("--password-file")) {
      Path file = Path.of(o.get("--password-file"));
      try {
        props.setProperty("password", Files.readAllLines(file, StandardCharsets.UTF_8).stream().findFirst()
            .orElse(""));
      } catch (IOException e) {
        throw new IllegalArgumentException("--password-file: a readable file expected, cannot read " + file);
      }
    }
    return props;
  }

  /** The driver in {@code jar} that accepts {@code url} (DriverManager ignores drivers of other class loaders). */
  private static Driver driver(Path jar, String url) {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalArgumentException("--driver-jar: a JDBC driver jar expected, no file at " + jar);
    }
    try {
      URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, OutboxCli.class.getClassLoader());
      for (Driver d : ServiceLoader.load(Driver.class, loader)) {
        if (d.acceptsURL(url)) {
          return d;
        }
      }
    } catch (IOException | SQLException | java.util.ServiceConfigurationError e) {
      throw new IllegalArgumentException("--driver-jar: cannot load a driver from " + jar + ": " + e.getMessage());
    }
    throw new IllegalArgumentException("--driver-jar: no driver in " + jar + " accepts " + url);
  }

  private static Connection connect(Driver driver, String url, Properties credentials) throws SQLException {
    if (driver != null) {
      Connection c = driver.connect(url, credentials);
      if (c == null) {
        throw new SQLException("the driver does not accept " + url, "08001");
      }
      return c;
    }
    try {
      return DriverManager.getConnection(url, credentials);
    } catch (SQLException e) {
      if ("08001".equals(e.getSQLState()) && e.getMessage() != null && e.getMessage().contains("No suitable driver")) {
        throw new SQLException("no JDBC driver for " + url + " on the class path: pass --driver-jar <driver.jar>",
            "08001", e);
      }
      throw e;
    }
  }

  private static ClassLoader kafkaLoader(String paths) {
    List<URL> urls = new ArrayList<>();
    for (String p : paths.split(Pattern.quote(File.pathSeparator))) {
      if (p.isBlank()) {
        continue;
      }
      Path path = Path.of(p);
      try {
        if (Files.isDirectory(path)) {
          try (Stream<Path> jars = Files.list(path)) {
            for (Path j : (Iterable<Path>) jars.filter(f -> f.toString().endsWith(".jar")).sorted()::iterator) {
              urls.add(j.toUri().toURL());
            }
          }
        } else if (Files.isRegularFile(path)) {
          urls.add(path.toUri().toURL());
        } else {
          throw new IllegalArgumentException("--kafka-jar: jars or folders of jars expected, nothing at " + path);
        }
      } catch (IOException e) {
        throw new IllegalArgumentException("--kafka-jar: cannot read " + path + ": " + e.getMessage());
      }
    }
    if (urls.isEmpty()) {
      throw new IllegalArgumentException("--kafka-jar: no jar in '" + paths + "'");
    }
    ClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
    try {
      Class.forName("org.apache.kafka.clients.producer.KafkaProducer", false, loader);
      // Spelled in parts: the agent jar relocates its own slf4j, and with it every literal naming org.slf4j.
      Class.forName(String.join(".", "org", "slf4j", "LoggerFactory"), false, loader);
    } catch (ClassNotFoundException | LinkageError e) {
      throw new IllegalArgumentException("--kafka-jar: kafka-clients and slf4j-api expected in '" + paths
          + "', missing " + e.getMessage());
    }
    return loader;
  }

  private static HttpServer metrics(OutboxRelay relay, int port) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(port), 0);
    server.createContext("/metrics", exchange -> {
      byte[] body = relay.metrics().prometheusText().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(body);
      }
    });
    server.start();
    return server;
  }
}
