package dev.fencing.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/** Loopback ports for the processes a test spawns, so that tests never depend on fixed ports being free. */
public final class Ports {

  private Ports() {
  }

  /**
   * Ports come from below the kernel's ephemeral range, so that no process's outgoing connection can take one between
   * the check here and the bind by the process it is meant for, and each is handed out at most once per JVM, so that
   * two servers of one test (say an etcd node and the agent's status endpoint) never race for the same number.
   */
  private static final int LOW = 10_000;
  private static final int HIGH = ephemeralLow();
  private static final AtomicInteger NEXT =
      new AtomicInteger(LOW + ThreadLocalRandom.current().nextInt(Math.max(1, (HIGH - LOW) / 2)));

  /** A port that was free a moment ago and was never handed out before by this JVM; bind it soon. */
  public static int freePort() {
    return freePorts(1)[0];
  }

  /** {@code count} distinct free ports, none handed out before by this JVM. */
  public static int[] freePorts(int count) {
    int[] ports = new int[count];
    for (int i = 0; i < count; i++) {
      ports[i] = next();
    }
    return ports;
  }

  private static int next() {
    for (int attempt = 0; attempt < 2_000; attempt++) {
      int port = NEXT.getAndUpdate(p -> p + 1 >= HIGH ? LOW : p + 1);
      if (bindable(port)) {
        return port;
      }
    }
    throw new IllegalStateException("no free loopback port in [" + LOW + ", " + HIGH + ") after 2000 attempts");
  }

  private static boolean bindable(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress("127.0.0.1", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** The low end of net.ipv4.ip_local_port_range (32768 when it cannot be read). */
  private static int ephemeralLow() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      int low = Integer.parseInt(range.split("\\s+")[0]);
      return low > LOW + 1_000 ? low : 32_768;
    } catch (IOException | RuntimeException e) {
      return 32_768;
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
}
