package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.apps.HttpApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each attempt of a request made by the JDK's own clients is decided and tagged on its own: the re-send
 * HttpURLConnection makes when a kept-alive connection closes before the status line (sun.net.http.retryPost), the
 * redirects HttpURLConnection (307, and 303 turned into a GET) and the JDK HttpClient (307, 308 with
 * Redirect.NORMAL) follow. Against real servers on plain sockets that hold a request until the test has let the
 * lease expire (etcd killed), and then close the connection or answer a redirect.
 */
class HttpAttemptsIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void resendsAndRedirectsAreDecidedAndTaggedPerAttempt(Path javaHome) throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); HoldingServer open = new HoldingServer();
        HoldingServer other = new HoldingServer(); HoldingServer fenced = new HoldingServer();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome)
            .name("attempts-java" + AgentProcesses.javaVersion(javaHome))
            .agentArgs("lock=attempts,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port
                + ",fenced.http=127.0.0.1:" + fenced.port() + ",etcd.endpoints=" + etcd.endpoints())
            .classpath(AgentProcesses.appClasspath()).mainClass(HttpApp.class.getName()).start()) {
      app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
      AppStdin stdin = AppStdin.http(app);
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      String pair = "token=[" + token + "] lock=[attempts]";
      String blocked = "Fencing Agent blocked a http side effect: lock 'attempts', token " + token
          + ": the lease expired (local deadline passed)";

      // Holding: every redirected request carries the pair, once (a 303 turns HttpURLConnection's POST into a GET).
      assertThat(stdin.run("URLC POST " + open.base() + "/redirect/307/" + other.port())).isEqualTo("STATUS 200");
      assertThat(stdin.run("URLC POST " + open.base() + "/redirect/303/" + other.port())).isEqualTo("STATUS 200");
      assertThat(stdin.run("SEND POST " + open.base() + "/redirect/307/" + other.port())).startsWith("STATUS 200");
      assertThat(stdin.run("SEND POST " + open.base() + "/redirect/308/" + other.port())).startsWith("STATUS 200");
      assertThat(other.received).containsExactly("POST /ok " + pair, "GET /ok " + pair, "POST /ok " + pair,
          "POST /ok " + pair);

      // Requests sent while holding, whose servers answer only after the deadline. HttpURLConnection's POST goes out
      // on the connection the POST before it left alive.
      assertThat(stdin.run("URLC POST " + open.base() + "/ok")).isEqualTo("STATUS 200");
      assertThat(stdin.run("BG resend URLC POST " + open.base() + "/hold-close")).isEqualTo("STATUS started");
      assertThat(stdin.run("BG urlc-away URLC POST " + fenced.base() + "/hold-redirect/307/" + other.port()
          + "/urlc")).isEqualTo("STATUS started");
      assertThat(stdin.run("BG urlc-fenced URLC POST " + fenced.base() + "/hold-redirect/307/" + fenced.port()))
          .isEqualTo("STATUS started");
      assertThat(stdin.run("BG send-away SEND POST " + fenced.base() + "/hold-redirect/307/" + other.port()
          + "/send")).isEqualTo("STATUS started");
      open.awaitHeld(1);
      fenced.awaitHeld(3);
      assertThat(open.received).endsWith("POST /ok " + pair, "POST /hold-close " + pair);
      other.received.clear();
      fenced.received.clear();
      open.received.clear();

      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      open.release();
      fenced.release();

      // The re-send of the POST whose connection closed before the status line is a new side effect: blocked.
      assertThat(late(app, "resend")).isEqualTo("ERR dev.fencing.agent.bootstrap.FencingBlockedException: " + blocked);
      assertThat(open.received).isEmpty();
      // Redirects answered after the deadline: toward an unfenced host blocked (the JDK HttpClient's send wraps the
      // block in an IOException, as every failure of its exchange), toward the fenced host sent with the last token.
      assertThat(late(app, "urlc-away")).isEqualTo("ERR dev.fencing.agent.bootstrap.FencingBlockedException: "
          + blocked);
      assertThat(late(app, "send-away")).startsWith("ERR java.io.IOException").contains(blocked);
      assertThat(late(app, "urlc-fenced")).isEqualTo("STATUS 200");
      assertThat(other.received).isEmpty();
      assertThat(fenced.received).containsExactly("POST /ok " + pair);
      assertThat(Http.get("http://127.0.0.1:" + port + "/metrics")).contains(
          "fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"attempts\",outcome=\"blocked\"} 3.0");
    }
  }

  /** The answer of the app's background command {@code tag}, once it is done. */
  private static String late(AgentJvm app, String tag) throws InterruptedException {
    String prefix = "LATE " + tag + " ";
    long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < end) {
      for (String line : app.output().lines().toList()) {
        if (line.startsWith(prefix)) {
          return line.substring(prefix.length());
        }
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no answer for " + tag + ":\n" + app.output());
  }

  /**
   * A real HTTP/1.1 server on a plain socket (keep-alive, a thread per connection), recording each request it reads
   * as "METHOD path token=[...] lock=[...]". /ok answers 200; /redirect/{status}/{port} answers that status with
   * Location http://127.0.0.1:{port}/ok; the first request to /hold-close or /hold-redirect/{status}/{port}/{name} is
   * held (counted by {@link #awaitHeld}) until {@link #release}, then /hold-close closes the connection without a
   * status line and /hold-redirect answers as /redirect (a later request to /hold-close gets 200).
   */
  static final class HoldingServer implements AutoCloseable {
    final List<String> received = new CopyOnWriteArrayList<>();
    private final ServerSocket socket;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final Set<String> heldOnce = ConcurrentHashMap.newKeySet();
    private final Semaphore held = new Semaphore(0);
    private final CountDownLatch released = new CountDownLatch(1);

    HoldingServer() throws IOException {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread accept = new Thread(() -> {
        try {
          while (true) {
            Socket s = socket.accept();
            connections.add(s);
            Thread t = new Thread(() -> serve(s), "holding-server-connection");
            t.setDaemon(true);
            t.start();
          }
        } catch (IOException closed) {
          // stopped
        }
      }, "holding-server");
      accept.setDaemon(true);
      accept.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    String base() {
      return "http://127.0.0.1:" + port();
    }

    void awaitHeld(int n) throws InterruptedException {
      assertThat(held.tryAcquire(n, 30, TimeUnit.SECONDS)).as("%d requests held by %s", n, base()).isTrue();
    }

    void release() {
      released.countDown();
    }

    private void serve(Socket s) {
      try (s) {
        InputStream in = new BufferedInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        String line;
        while ((line = readLine(in)) != null && !line.isEmpty()) {
          List<String> tokens = new ArrayList<>();
          List<String> locks = new ArrayList<>();
          int length = 0;
          String header;
          while ((header = readLine(in)) != null && !header.isEmpty()) {
            int colon = header.indexOf(':');
            String name = header.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = header.substring(colon + 1).trim();
            switch (name) {
              case "fencing-token" -> tokens.add(value);
              case "fencing-lock" -> locks.add(value);
              case "content-length" -> length = Integer.parseInt(value);
              default -> { }
            }
          }
          in.readNBytes(length);
          String[] request = line.split(" ");
          String path = request[1];
          received.add(request[0] + " " + path + " token=" + (tokens.isEmpty() ? null : tokens) + " lock="
              + (locks.isEmpty() ? null : locks));
          String[] p = path.split("/");
          if (path.startsWith("/hold-") && heldOnce.add(path)) {
            held.release();
            released.await(60, TimeUnit.SECONDS);
            if (path.equals("/hold-close")) {
              return; // no status line: the client sees the kept-alive connection closed
            }
          }
          if (path.startsWith("/redirect/") || path.startsWith("/hold-redirect/")) {
            write(out, "HTTP/1.1 " + p[2] + " Redirect\r\nLocation: http://127.0.0.1:" + p[3] + "/ok\r\n"
                + "Content-Length: 0\r\n\r\n");
          } else {
            write(out, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
          }
        }
      } catch (IOException | InterruptedException | RuntimeException e) {
        // the client went away, or the server stopped
      } finally {
        connections.remove(s);
      }
    }

    private static void write(OutputStream out, String response) throws IOException {
      out.write(response.getBytes(StandardCharsets.US_ASCII));
      out.flush();
    }

    private static String readLine(InputStream in) throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      int c;
      while ((c = in.read()) != -1) {
        if (c == '\n') {
          String line = b.toString(StandardCharsets.US_ASCII);
          return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
        }
        b.write(c);
      }
      return b.size() == 0 ? null : b.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
      released.countDown();
      socket.close();
      for (Socket s : connections) {
        s.close();
      }
    }
  }
}
