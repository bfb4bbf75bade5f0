package dev.fencing.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A real Redis server (Debian's {@code redis-server}) on a free loopback port, without persistence
 * ({@code --save "" --appendonly no}), in a temporary directory: for the application locks Redis serves (Redisson).
 */
public final class RedisServer implements AutoCloseable {
  private static final String INSTALL_HINT = " is not installed: run `apt-get update && apt-get install -y "
      + "redis-server` (Debian) — the Redisson tests need a real Redis";

  private final Path root;
  private final int port;
  private final Process process;

  private RedisServer(Path root, int port, Process process) {
    this.root = root;
    this.port = port;
    this.process = process;
  }

  /** A new, empty server, answering PING on return. */
  public static RedisServer start() {
    Path binary = Processes.executable("redis-server", INSTALL_HINT);
    Path root;
    try {
      root = Files.createTempDirectory("fencing-redis-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int port = Ports.freePort();
    Path log = root.resolve("redis.log");
    Process p;
    try {
      p = Processes.reapOnExit(new ProcessBuilder(List.of(binary.toString(), "--port", Integer.toString(port),
          "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", root.toString()))
          .redirectErrorStream(true).redirectOutput(log.toFile()).start());
      p.getOutputStream().close();
    } catch (IOException e) {
      Processes.deleteTree(root);
      throw new UncheckedIOException("cannot start " + binary, e);
    }
    RedisServer server = new RedisServer(root, port, p);
    long deadline = System.nanoTime() + 15_000_000_000L;
    while (!server.pings()) {
      if (!p.isAlive() || System.nanoTime() > deadline) {
        String tail = Processes.tail(log, 20);
        server.close();
        throw new IllegalStateException("Redis on port " + port + " did not answer PING within 15 s:\n" + tail);
      }
      Processes.sleep(50);
    }
    return server;
  }

  /** {@code redis://127.0.0.1:<port>}, as Redisson's config takes it. */
  public String address() {
    return "redis://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** Whether the server answers PING with PONG now. */
  private boolean pings() {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 500);
      s.setSoTimeout(1000);
      OutputStream out = s.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[7];
      int n = in.readNBytes(buf, 0, 7);
      return new String(buf, 0, n, StandardCharsets.US_ASCII).startsWith("+PONG");
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() {
    try {
      process.destroy();
      if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      Processes.deleteTree(root);
    }
  }

  @Override
  public String toString() {
    return "Redis 127.0.0.1:" + port;
  }
}
