package dev.fencing.agent.it.apps;

import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * An ordinary service (no fencing or tracing code): each {@code GET /work} it receives makes one HTTP POST (JDK
 * HttpClient), one JDBC write and one Kafka send (topic {@code traced}), so the OpenTelemetry agent traces them inside
 * the request's SERVER span. Args: {@code <own port> <http url> <jdbc url> <kafka bootstrap servers>}. Answers
 * {@code HTTP <status>|ERR ...}, {@code ROW <@fencing_token after the write>|ERR ...} and {@code SENT|ERR ...}, one
 * per line.
 */
public final class TracedApp {
  private TracedApp() {}

  public static void main(String[] args) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    Connection c = DriverManager.getConnection(args[2]);
    KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers", args[3], "acks", "1",
        "max.block.ms", "10000"), new StringSerializer(), new StringSerializer());
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])), 0);
    server.createContext("/work", ex -> {
      StringBuilder out = new StringBuilder();
      try {
        HttpResponse<Void> r = client.send(HttpRequest.newBuilder(URI.create(args[1]))
            .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.discarding());
        out.append("HTTP ").append(r.statusCode()).append('\n');
      } catch (Exception e) {
        out.append("ERR ").append(e).append('\n');
      }
      try (Statement s = c.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS t(v INT)"); // a write too: only once the lease is held
        s.executeUpdate("INSERT INTO t(v) VALUES (1)");
        try (ResultSet rs = s.executeQuery("SELECT @fencing_token")) {
          rs.next();
          out.append("ROW ").append(rs.getString(1)).append('\n');
        }
      } catch (Exception e) {
        out.append("ERR ").append(e).append('\n');
      }
      try {
        producer.send(new ProducerRecord<>("traced", "k", "v")).get(10, TimeUnit.SECONDS);
        out.append("SENT\n");
      } catch (Exception e) {
        out.append("ERR ").append(e).append('\n');
      }
      byte[] body = out.toString().getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(200, body.length);
      try (OutputStream o = ex.getResponseBody()) {
        o.write(body);
      }
    });
    server.start();
    System.out.println("APP STARTED");
    System.out.flush();
  }
}
