package dev.fencing.fence.http;

import com.sun.net.httpserver.HttpServer;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/** A real HTTP server on a free loopback port with the fence in front of a {@link Backend}. */
interface FencedServer extends AutoCloseable {

  URI uri();

  @Override
  void close();

  /** The JDK's com.sun.net.httpserver with {@link FenceHttpFilter} on its one context, and a thread pool. */
  static FencedServer jdk(HttpFence fence, Backend backend) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    ExecutorService pool = Executors.newCachedThreadPool();
    server.setExecutor(pool);
    server.createContext("/", exchange -> {
      try (exchange; InputStream in = exchange.getRequestBody()) {
        in.readAllBytes();
        int status;
        try {
          status = backend.handle(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
              exchange.getRequestHeaders()::getFirst);
        } catch (Exception e) {
          status = 500;
        }
        byte[] body = "ok".getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, exchange.getRequestMethod().equals("HEAD") ? -1 : body.length);
        try (OutputStream os = exchange.getResponseBody()) {
          if (!exchange.getRequestMethod().equals("HEAD")) {
            os.write(body);
          }
        }
      }
    }).getFilters().add(new FenceHttpFilter(fence));
    server.start();
    URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    return new FencedServer() {
      @Override
      public URI uri() {
        return uri;
      }

      @Override
      public void close() {
        server.stop(0);
        pool.shutdownNow();
      }
    };
  }

  /** Jetty 12 (ee10, Servlet 6) with {@link FenceServletFilter} on /* in front of a servlet. */
  static FencedServer jetty(FenceServletFilter filter, Map<String, String> initParameters, Backend backend)
      throws Exception {
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    context.addServlet(new ServletHolder(new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
        req.getInputStream().readAllBytes();
        int status;
        try {
          status = backend.handle(req.getMethod(), req.getRequestURI(), req::getHeader);
        } catch (Exception e) {
          status = 500;
        }
        res.setStatus(status);
        res.getOutputStream().write("ok".getBytes(StandardCharsets.UTF_8));
      }
    }), "/*");
    FilterHolder holder = new FilterHolder(filter);
    holder.setInitParameters(initParameters);
    context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    URI uri = URI.create("http://127.0.0.1:" + connector.getLocalPort());
    return new FencedServer() {
      @Override
      public URI uri() {
        return uri;
      }

      @Override
      public void close() {
        try {
          server.stop();
        } catch (Exception e) {
          throw new IllegalStateException("cannot stop Jetty", e);
        }
      }
    };
  }
}
