package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

/** Loopback ports for the processes a test spawns, so that tests never depend on fixed ports being free. */
public final class Ports {

  private Ports() {
  }

  /** A port that was free a moment ago; the caller's process must bind it soon. */
  public static int freePort() {
    return freePorts(1)[0];
  }

  /**
   * {@code count} distinct free ports. Sockets are held open until all are chosen: closing each before asking for
   * the next could hand out the same port twice, and an etcd node whose peer port equals a client port never starts.
   */
  public static int[] freePorts(int count) {
    ServerSocket[] sockets = new ServerSocket[count];
    try {
      int[] ports = new int[count];
      for (int i = 0; i < count; i++) {
        sockets[i] = new ServerSocket();
        sockets[i].bind(new InetSocketAddress("127.0.0.1", 0));
        ports[i] = sockets[i].getLocalPort();
      }
      return ports;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot find a free loopback port", e);
    } finally {
      for (ServerSocket socket : sockets) {
        closeQuietly(socket);
      }
    }
  }

  /** Waits until something accepts connections on 127.0.0.1:{@code port}. */
  public static void awaitOpen(int port, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    IOException last;
    do {
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException e) {
        last = e;
      }
      Processes.sleep(50);
    } while (System.nanoTime() < deadline);
    throw new AssertionError("nothing listens on 127.0.0.1:" + port + " after " + timeout + ": " + last);
  }

  private static void closeQuietly(ServerSocket socket) {
    if (socket != null) {
      try {
        socket.close();
      } catch (IOException ignored) {
        // The port is still released when the socket is collected; nothing useful to do here.
      }
    }
  }
}
