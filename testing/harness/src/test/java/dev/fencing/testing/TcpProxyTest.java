package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import org.junit.jupiter.api.Test;

/** The partitionable proxy against a real echo server on loopback. */
class TcpProxyTest {

  @Test
  void forwardsThenBlackholesThenDeliversWhatWasHeldAfterTheHeal() throws Exception {
    try (ServerSocket echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        TcpProxy proxy = new TcpProxy(echo.getLocalPort())) {
      Thread server = new Thread(() -> serveEcho(echo));
      server.setDaemon(true);
      server.start();
      try (Socket client = new Socket(InetAddress.getLoopbackAddress(), proxy.port())) {
        client.setSoTimeout(2_000);
        client.getOutputStream().write('a');
        assertThat(client.getInputStream().read()).isEqualTo('a');

        proxy.partition();
        client.getOutputStream().write('b');
        client.setSoTimeout(500);
        assertThat(readOrTimeout(client.getInputStream())).isEqualTo(-2);

        proxy.heal();
        client.setSoTimeout(2_000);
        assertThat(client.getInputStream().read()).isEqualTo('b');
      }
    }
  }

  @Test
  void aConnectionMadeDuringAPartitionIsHeldUntilTheHeal() throws Exception {
    try (ServerSocket echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        TcpProxy proxy = new TcpProxy(echo.getLocalPort())) {
      Thread server = new Thread(() -> serveEcho(echo));
      server.setDaemon(true);
      server.start();
      proxy.partition();
      try (Socket client = new Socket(InetAddress.getLoopbackAddress(), proxy.port())) {
        client.getOutputStream().write('c');
        client.setSoTimeout(500);
        assertThat(readOrTimeout(client.getInputStream())).isEqualTo(-2);
        proxy.heal();
        client.setSoTimeout(2_000);
        assertThat(client.getInputStream().read()).isEqualTo('c');
      }
    }
  }

  @Test
  void aPortTakenBetweenItsPickAndTheBindIsPassedOverForTheNext() throws Exception {
    try (ServerSocket echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        ServerSocket squatter = new ServerSocket(Ports.freePort(), 50, InetAddress.getLoopbackAddress())) {
      int free = Ports.freePort();
      int[] candidates = {squatter.getLocalPort(), free};
      int[] next = {0};
      try (TcpProxy proxy = new TcpProxy(() -> candidates[next[0]++], echo.getLocalPort())) {
        assertThat(proxy.port()).isEqualTo(free);
        Thread server = new Thread(() -> serveEcho(echo));
        server.setDaemon(true);
        server.start();
        try (Socket client = new Socket(InetAddress.getLoopbackAddress(), proxy.port())) {
          client.setSoTimeout(2_000);
          client.getOutputStream().write('d');
          assertThat(client.getInputStream().read()).isEqualTo('d');
        }
      }
    }
  }

  private static int readOrTimeout(InputStream in) throws IOException {
    try {
      return in.read();
    } catch (SocketTimeoutException e) {
      return -2;
    }
  }

  private static void serveEcho(ServerSocket echo) {
    while (!echo.isClosed()) {
      try {
        Socket s = echo.accept();
        Thread t = new Thread(() -> {
          try (s) {
            s.getInputStream().transferTo(s.getOutputStream());
          } catch (IOException ignored) {
            // client gone
          }
        });
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }
}
