package dev.fencing.agent.it.apps;

import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

/**
 * An ordinary service (no fencing code): a JDK HttpServer whose {@code POST /relay} makes a POST of its own to the URL
 * given as args[0] (a third party) and answers with that call's status, or {@code blocked <exception>: <message>} when
 * the call failed. Prints {@code APP STARTED port=<port>}.
 */
public final class RelayApp {
  private RelayApp() {}

  public static void main(String[] args) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/relay", ex -> {
      String answer;
      try {
        int status = client.send(HttpRequest.newBuilder(URI.create(args[0]))
            .POST(HttpRequest.BodyPublishers.ofString("relayed")).build(), HttpResponse.BodyHandlers.discarding())
            .statusCode();
        answer = "status " + status;
      } catch (Exception e) {
        answer = "blocked " + e.getClass().getSimpleName() + ": " + e.getMessage();
      }
      byte[] body = answer.getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(200, body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    });
    server.start();
    System.out.println("APP STARTED port=" + server.getAddress().getPort());
    System.out.flush();
  }
}
