package dev.fencing.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;

/**
 * A TCP proxy on a loopback port in front of one server port (an etcd node, a database, a ZooKeeper server's quorum
 * port), owned by the test, so that one process can be cut off from it while everything else goes on.
 * {@link #partition()} is a blackhole, as a real partition is: connections stay open, bytes stop moving both ways (a
 * pump holds what it read until the heal), new connections are accepted but not forwarded. {@link #heal()} lets
 * everything flow again, as TCP retransmission would. Threads, not NIO: a handful of connections per proxy.
 */
public final class TcpProxy implements AutoCloseable {
  private static final int BIND_ATTEMPTS = 10;

  private final ServerSocket server;
  private final int targetPort;
  private final Object gate = new Object();
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final AtomicLong forwarded = new AtomicLong();
  private volatile boolean partitioned;
  private volatile boolean closed;

  /** A proxy to 127.0.0.1:{@code targetPort}, listening on a loopback port from {@link Ports}. */
  public TcpProxy(int targetPort) {
    this(Ports::freePort, targetPort);
  }

  /**
   * Listens on the first port of {@code listenPorts} it can bind. A port from {@link Ports} was free when it was
   * picked, but another process (a server of a concurrent run, say) may bind it before this does: the next one is
   * tried then, since nothing was told the port yet.
   */
  public TcpProxy(IntSupplier listenPorts, int targetPort) {
    this.targetPort = targetPort;
    this.server = bind(listenPorts);
    daemon("proxy-accept-" + server.getLocalPort(), this::acceptLoop).start();
  }

  private static ServerSocket bind(IntSupplier listenPorts) {
    BindException last = null;
    for (int attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
      int port = listenPorts.getAsInt();
      try {
        ServerSocket socket = new ServerSocket();
        try {
          socket.setReuseAddress(true);
          socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
          return socket;
        } catch (IOException e) {
          socket.close();
          throw e;
        }
      } catch (BindException e) {
        last = e;
      } catch (IOException e) {
        throw new UncheckedIOException("cannot listen on 127.0.0.1:" + port, e);
      }
    }
    throw new UncheckedIOException("cannot listen on a loopback port: " + BIND_ATTEMPTS + " ports were taken", last);
  }

  public int port() {
    return server.getLocalPort();
  }

  /** Bytes it has forwarded, both ways, since it was made. */
  public long forwarded() {
    return forwarded.get();
  }

  /** The port it forwards to. */
  public int targetPort() {
    return targetPort;
  }

  /** Stops every byte between the clients and the target until {@link #heal()}. */
  public void partition() {
    partitioned = true;
  }

  public void heal() {
    synchronized (gate) {
      partitioned = false;
      gate.notifyAll();
    }
  }

  public boolean partitioned() {
    return partitioned;
  }

  @Override
  public void close() {
    closed = true;
    heal();
    try {
      server.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    sockets.forEach(TcpProxy::closeQuietly);
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      sockets.add(client);
      daemon("proxy-connect-" + targetPort, () -> connect(client)).start();
    }
  }

  private void connect(Socket client) {
    Socket upstream = new Socket();
    try {
      awaitHealed();
      upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 2_000);
      sockets.add(upstream);
      upstream.setTcpNoDelay(true);
      client.setTcpNoDelay(true);
      InputStream fromClient = client.getInputStream();
      OutputStream toUpstream = upstream.getOutputStream();
      daemon("proxy-up-" + targetPort, () -> pump(fromClient, toUpstream, client, upstream)).start();
      pump(upstream.getInputStream(), client.getOutputStream(), client, upstream);
    } catch (IOException e) {
      // target down (a killed etcd node): the client sees the connection close, as it would see a refusal
      closeQuietly(client);
      closeQuietly(upstream);
    }
  }

  private void pump(InputStream in, OutputStream out, Socket a, Socket b) {
    byte[] buffer = new byte[16 * 1024];
    try {
      for (int n; (n = in.read(buffer)) >= 0; ) {
        awaitHealed();
        out.write(buffer, 0, n);
        out.flush();
        forwarded.addAndGet(n);
      }
    } catch (IOException e) {
      // one side went away
    } finally {
      closeQuietly(a);
      closeQuietly(b);
      sockets.remove(a);
      sockets.remove(b);
    }
  }

  private void awaitHealed() throws IOException {
    synchronized (gate) {
      while (partitioned && !closed) {
        try {
          gate.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted", e);
        }
      }
    }
    if (closed) {
      throw new IOException("proxy closed");
    }
  }

  private static Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    return t;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // already gone
    }
  }
}
