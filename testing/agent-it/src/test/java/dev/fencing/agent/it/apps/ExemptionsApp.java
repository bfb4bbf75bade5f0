package dev.fencing.agent.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.flywaydb.core.Flyway;

/**
 * An ordinary application (no fencing code) with side effects of every kind, driven line by line on stdin:
 * {@code SQL <url> <statement>} (one connection per URL, autocommit), {@code TXN <url> <stmt>;<stmt>} (one
 * transaction, committed), {@code BEGIN <url>} and {@code COMMIT <url>} (a transaction over the SQL commands
 * between them), {@code HTTP <method> <url>} (JDK HttpClient), {@code KAFKA <topic> <value>} (KafkaProducer to the
 * broker given as the first argument, waits for the ack), {@code LINGER <topic> <value>} (a second producer that
 * keeps records in its buffer for 8 s; returns at once) and {@code LINGERED} (waits for those records' outcome), and
 * {@code FLYWAY <url> <dir>} (a Flyway migration from the SQL files in dir). Answers: {@code > OK ...} or
 * {@code > ERR <what> <message>}.
 */
public final class ExemptionsApp {
  private ExemptionsApp() {}

  public static void main(String[] args) throws Exception {
    Map<String, Connection> connections = new HashMap<>();
    HttpClient http = HttpClient.newHttpClient();
    Map<String, Object> props = new HashMap<>();
    props.put("bootstrap.servers", args[0]);
    props.put("max.block.ms", "10000");
    props.put("delivery.timeout.ms", "10000");
    props.put("request.timeout.ms", "5000");
    props.put("linger.ms", "0");
    Map<String, Object> lingerProps = new HashMap<>(props);
    lingerProps.put("linger.ms", "8000");
    lingerProps.put("delivery.timeout.ms", "60000");
    java.util.List<java.util.concurrent.Future<?>> lingering = new java.util.ArrayList<>();
    KafkaProducer<String, String> lingerer = null; // made by the first LINGER
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
      System.out.println("APP STARTED");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
      String line;
      while ((line = in.readLine()) != null) {
        String[] p = line.split(" ", 3);
        String answer;
        try {
          switch (p[0]) {
            case "SQL": {
              Connection c = connections.computeIfAbsent(p[1], ExemptionsApp::connect);
              try (Statement s = c.createStatement()) {
                s.execute(p[2]);
                answer = "OK " + s.getUpdateCount();
              }
              break;
            }
            case "TXN": {
              Connection c = connections.computeIfAbsent(p[1], ExemptionsApp::connect);
              c.setAutoCommit(false);
              try (Statement s = c.createStatement()) {
                for (String sql : p[2].split(";")) {
                  s.execute(sql);
                }
                c.commit();
                answer = "OK committed";
              } catch (SQLException e) {
                c.rollback();
                throw e;
              } finally {
                c.setAutoCommit(true);
              }
              break;
            }
            case "BEGIN": {
              connections.computeIfAbsent(p[1], ExemptionsApp::connect).setAutoCommit(false);
              answer = "OK begun";
              break;
            }
            case "COMMIT": {
              Connection c = connections.computeIfAbsent(p[1], ExemptionsApp::connect);
              try {
                c.commit();
                answer = "OK committed";
              } finally {
                c.setAutoCommit(true);
              }
              break;
            }
            case "LINGER": {
              if (lingerer == null) {
                lingerer = new KafkaProducer<>(lingerProps, new StringSerializer(), new StringSerializer());
              }
              lingering.add(lingerer.send(new ProducerRecord<>(p[1], p[2], p[2])));
              answer = "OK queued";
              break;
            }
            case "LINGERED": {
              try {
                for (java.util.concurrent.Future<?> f : lingering) {
                  f.get(30, TimeUnit.SECONDS);
                }
                answer = "OK sent";
              } finally {
                lingering.clear();
              }
              break;
            }
            case "HTTP": {
              HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(p[2]))
                  .method(p[1], HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
              answer = "OK " + r.statusCode();
              break;
            }
            case "KAFKA": {
              String[] tv = (p[1] + " " + p[2]).split(" ", 2);
              producer.send(new ProducerRecord<>(tv[0], tv[1], tv[1])).get(20, TimeUnit.SECONDS);
              answer = "OK sent";
              break;
            }
            case "FLYWAY": {
              int applied = Flyway.configure().dataSource(p[1], null, null).locations("filesystem:" + p[2]).load()
                  .migrate().migrationsExecuted;
              answer = "OK " + applied;
              break;
            }
            default:
              answer = "ERR unknown command " + p[0];
          }
        } catch (Throwable t) {
          Throwable root = t;
          while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
          }
          String state = root instanceof SQLException ? ((SQLException) root).getSQLState() + " " : "";
          answer = "ERR " + state + root.getClass().getSimpleName() + " " + String.valueOf(root.getMessage())
              .replace('\n', ' ');
        }
        System.out.println("> " + answer);
      }
      if (lingerer != null) {
        lingerer.close();
      }
    }
  }

  private static Connection connect(String url) {
    try {
      return DriverManager.getConnection(url);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
